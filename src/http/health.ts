// GET /health: liveness plus a database round trip (on a connection of its own, see DatabaseProbe);
// 503 when the database does not answer, degraded (still 200) while the snapshot horizon is held back.
import { Router } from 'express';
import { RETRY_AFTER_SECONDS } from '../kernel/errors.js';
import type { HorizonStatus } from '../eventstore/index.js';

/** What answers whether the database answers (db/probe.ts's DatabaseProbe). */
export interface DatabasePing {
  ping(timeoutMs: number): Promise<boolean>;
}

export interface HealthDeps {
  database: DatabasePing;
  version: string;
  startedAt: number;
  timeoutMs?: number;
  horizon?: () => HorizonStatus;
}

export function healthRouter({ database, version, startedAt, timeoutMs = 2000, horizon }: HealthDeps): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const databaseUp = await database.ping(timeoutMs);
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
