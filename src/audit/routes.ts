// /admin/audit: the signed checkpoints and the verification of chains and checkpoints (scope audit:read, or iam:admin; with SVC_TENANT_IDS only across the deployment: the superadmin group too).
import { Router } from 'express';
import type { Pool } from '../db/pool.js';
import { selectGate } from '../eventstore/sql.js';
import type { LogFollower } from '../eventstore/follow.js';
import type { EventStore } from '../eventstore/store.js';
import { cursorOf } from '../eventstore/types.js';
import type { Reads } from '../http/reads.js';
import { openEventStream } from '../http/sse.js';
import type { Logger } from '../kernel/logger.js';
import type { Authenticator } from '../http/authenticator.js';
import type { SigningKeys } from '../iam/keys.js';
import { AUDIT_READ_SCOPE } from '../kernel/access.js';
import type { Clock } from '../kernel/clock.js';
import { integerParam } from '../kernel/validation.js';
import { checkpointOf, writeCheckpoint } from './checkpoints.js';
import { CHECKPOINT_STREAM, type Checkpoint } from './digest.js';
import { verifyAuditLog } from './verify.js';
import { encodeCursor, parseLogQuery, presentLogEvent } from './log.js';
import { streamLog } from './logStream.js';
import type { DataKeys } from '../privacy/dataKeys.js';

export interface AuditRouteDeps {
  pool: Pool;
  /** GET /admin/events and the stream's catch-up read here (a read replica when one is set). */
  reads: Reads;
  store: EventStore;
  follower: LogFollower;
  logger: Logger;
  keys: SigningKeys;
  authenticator: Authenticator;
  clock: Clock;
  /** Personal values show as stored (sealed) and as null once their subject is erased. */
  dataKeys: DataKeys;
}

/**
 * @example
 * app.use(auditRouter({ pool, store, follower, logger, keys, authenticator, clock }));
 */
/**
 * A checkpoint only reaches the gated horizon: while a transaction anywhere on the cluster holds
 * committed events behind the gate, tries again for a few seconds so the answer covers them.
 */
async function writeCheckpointSoon(pool: Pool, write: () => Promise<Checkpoint | null>): Promise<Checkpoint | null> {
  for (let attempt = 0; ; attempt++) {
    const checkpoint = await write();
    if (checkpoint || attempt >= 25 || !(await selectGate(pool)).isHoldingEvents) return checkpoint;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function auditRouter(deps: AuditRouteDeps): Router {
  const { pool, store, keys, authenticator } = deps;
  const router = Router();
  // The log and its checkpoints span every tenant: with SVC_TENANT_IDS, for deployment admins (or audit:read with superadmin).
  const why = 'the event log holds every tenant';
  const read = authenticator.requireDeploymentAdmin(why, { scope: AUDIT_READ_SCOPE });

  router.get('/admin/audit/verify', read, async (_req, res) => {
    res.json(await verifyAuditLog(pool, keys.jwks));
  });

  router.get('/admin/audit/checkpoints', read, async (req, res) => {
    const after = integerParam(req.query.after, 'after', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = integerParam(req.query.limit, 'limit', 100, 1, 1000);
    const events = await store.readStream(CHECKPOINT_STREAM, after, limit);
    const checkpoints = events.map((event) => ({ ...checkpointOf(event), global_position: event.globalPosition, hash: event.hash }));
    res.json({ checkpoints, next_after: events.length === limit ? events.at(-1)!.streamPosition : null });
  });

  // The log itself, in the gated order: a page after a cursor, or a stream (replay, then live).
  router.get('/admin/events', read, async (req, res) => {
    const { filter, after, limit } = parseLogQuery(req.query, { isPaged: true });
    const { value: events } = await deps.reads.read(req, (db) => store.readGlobal(after, limit, filter, db));
    const next = events.length === limit ? encodeCursor(cursorOf(events.at(-1)!)) : null;
    res.json({ events: await deps.dataKeys.nullErased(events.map(presentLogEvent)), next_cursor: next });
  });

  router.get('/admin/events/stream', read, async (req, res) => {
    const lastEventId = req.headers['last-event-id'];
    const query = parseLogQuery(req.query, { isPaged: false, lastEventId: typeof lastEventId === 'string' ? lastEventId.trim() : undefined });
    const db = await deps.reads.db(req);
    await streamLog(
      { ...deps, db, onReplicaFailure: (error) => deps.reads.reportFailure(error) },
      query,
      openEventStream(req, res, { credentials: authenticator }),
      res,
    );
  });

  // On demand: a checkpoint of whatever the log holds past the last one (none when nothing is new).
  router.post('/admin/audit/checkpoints', authenticator.requireDeploymentAdmin(why), async (_req, res) => {
    const checkpoint = await writeCheckpointSoon(pool, () => writeCheckpoint(store, keys, deps.clock, true));
    res.status(checkpoint ? 201 : 200).json({ checkpoint });
  });

  return router;
}
