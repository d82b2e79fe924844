// GET /health: liveness plus a database round trip; 503 when the database does not answer.
import { Router } from 'express';
import type { Queryable } from '../db/pool.js';
import { RETRY_AFTER_SECONDS } from '../kernel/errors.js';

export interface HealthDeps {
  db: Queryable;
  version: string;
  startedAt: number;
  timeoutMs?: number;
}

export function healthRouter({ db, version, startedAt, timeoutMs = 2000 }: HealthDeps): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const databaseUp = await pingDatabase(db, timeoutMs);
    if (!databaseUp) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    res.status(databaseUp ? 200 : 503).json({
      status: databaseUp ? 'ok' : 'degraded',
      database: databaseUp ? 'ok' : 'unreachable',
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      version,
    });
  });
  return router;
}

async function pingDatabase(db: Queryable, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([db.query('SELECT 1').then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
