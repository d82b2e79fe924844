// GET /health: liveness plus a database round trip; 503 when the database does not answer,
// degraded (still 200) while the snapshot horizon is held back.
import { Router } from 'express';
import type { Queryable } from '../db/pool.js';
import { RETRY_AFTER_SECONDS } from '../kernel/errors.js';
import type { HorizonStatus } from '../eventstore/index.js';

export interface HealthDeps {
  db: Queryable;
  version: string;
  startedAt: number;
  timeoutMs?: number;
  horizon?: () => HorizonStatus;
}

export function healthRouter({ db, version, startedAt, timeoutMs = 2000, horizon }: HealthDeps): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const databaseUp = await pingDatabase(db, timeoutMs);
    if (!databaseUp) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
    const horizonStatus = horizon?.();
    res.status(databaseUp ? 200 : 503).json({
      status: databaseUp && horizonStatus?.status !== 'held' ? 'ok' : 'degraded',
      database: databaseUp ? 'ok' : 'unreachable',
      ...(horizonStatus ? { horizon: horizonStatus } : {}),
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
    return await Promise.race([
      db.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
