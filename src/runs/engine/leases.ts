// Run leases: which process executes a run, until when. Claims skip rows another claimer holds.
import type { Queryable } from '../../db/pool.js';

/** Takes the lease when it is free or expired; answers whether this owner holds it now. */
export async function acquireLease(db: Queryable, runId: string, owner: string, ttlMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `INSERT INTO svc_run_leases (run_id, owner, expires_at) VALUES ($1, $2, now() + $3 * interval '1 millisecond')
     ON CONFLICT (run_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
       WHERE svc_run_leases.expires_at <= now() OR svc_run_leases.owner = EXCLUDED.owner
     RETURNING run_id`,
    [runId, owner, ttlMs],
  );
  return rows.length > 0;
}

/**
 * Extends the lease only while this owner still holds it unexpired. False: it lapsed, so another
 * process may have taken the run over (or may yet): this owner must not start another step on it.
 */
export async function keepLease(db: Queryable, runId: string, owner: string, ttlMs: number): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE svc_run_leases SET expires_at = now() + $3 * interval '1 millisecond'
     WHERE run_id = $1 AND owner = $2 AND expires_at > now() RETURNING run_id`,
    [runId, owner, ttlMs],
  );
  return rows.length > 0;
}

/** Runs whose lease another process holds: the journal commit that named them must not happen. */
export class FencedRuns extends Error {
  constructor(readonly runIds: ReadonlySet<string>) {
    super(`runs leased by another process: ${[...runIds].join(', ')}`);
  }
}

/** What svc_refuse_fenced_runs raises (db/0023). */
const FENCED_SQLSTATE = 'SV001';

/**
 * In a journal commit: takes or extends the lease of each run (as acquireLease does), or gives it up
 * for runs that end with the commit. Fails with FencedRuns when another owner holds one of them: the
 * transaction is then aborted, so a COMMIT sent behind this statement rolls back. Leases are locked
 * in run id order, so two commits never wait on each other in a cycle.
 */
export async function settleLeases(db: Queryable, runs: readonly { runId: string; release: boolean }[], owner: string, ttlMs: number): Promise<void> {
  await db
    .query({
      name: 'svc_settle_leases_v2',
      text: `WITH claim AS (
             SELECT * FROM unnest($1::uuid[], $2::boolean[]) AS c(run_id, release)
           ), kept AS (
             INSERT INTO svc_run_leases (run_id, owner, expires_at)
             SELECT run_id, $3, now() + $4 * interval '1 millisecond' FROM claim WHERE NOT release ORDER BY run_id
             ON CONFLICT (run_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
               WHERE svc_run_leases.expires_at <= now() OR svc_run_leases.owner = EXCLUDED.owner
             RETURNING run_id
           ), released AS (
             DELETE FROM svc_run_leases l USING claim c
             WHERE c.release AND l.run_id = c.run_id AND (l.owner = $3 OR l.expires_at <= now())
             RETURNING l.run_id
           )
           SELECT svc_refuse_fenced_runs(ARRAY(
             SELECT c.run_id FROM claim c
             WHERE CASE WHEN c.release
                     THEN c.run_id NOT IN (SELECT run_id FROM released) AND EXISTS (SELECT 1 FROM svc_run_leases l WHERE l.run_id = c.run_id)
                     ELSE c.run_id NOT IN (SELECT run_id FROM kept) END))`,
      values: [runs.map((r) => r.runId), runs.map((r) => r.release), owner, ttlMs],
    })
    .catch((error: unknown) => {
      const { code, detail } = error as { code?: string; detail?: string };
      throw code === FENCED_SQLSTATE ? new FencedRuns(new Set((detail ?? '').split(',').filter(Boolean))) : error;
    });
}

/** The heartbeat: a lease a journal commit has locked is being extended by it, so it is skipped, never waited for. */
export async function renewLeases(db: Queryable, runIds: string[], owner: string, ttlMs: number): Promise<void> {
  if (runIds.length === 0) return;
  await db.query(
    `UPDATE svc_run_leases SET expires_at = now() + $3 * interval '1 millisecond'
     WHERE run_id IN (SELECT run_id FROM svc_run_leases WHERE run_id = ANY($1::uuid[]) AND owner = $2 FOR UPDATE SKIP LOCKED)`,
    [runIds, owner, ttlMs],
  );
}

export async function releaseLease(db: Queryable, runId: string, owner: string): Promise<void> {
  await db.query('DELETE FROM svc_run_leases WHERE run_id = $1 AND owner = $2', [runId, owner]);
}

/** claimRuns' statement ($1 owner, $2 lease ms, $3 limit); exported for the test that checks its plan. */
export const CLAIM_RUNS_SQL = `WITH due AS (
       SELECT r.id FROM svc_runs r
       WHERE r.status IN ('waiting_retry', 'waiting_timer') AND r.wake_at <= now()
         AND NOT EXISTS (SELECT 1 FROM svc_run_leases l WHERE l.run_id = r.id AND l.expires_at > now())
       ORDER BY r.wake_at LIMIT $3
       FOR UPDATE OF r SKIP LOCKED
     ), orphaned AS (
       SELECT r.id FROM svc_runs r
       WHERE r.status IN ('queued', 'running') AND r.slot IS DISTINCT FROM 'waiting'
         AND NOT EXISTS (SELECT 1 FROM svc_run_leases l WHERE l.run_id = r.id AND l.expires_at > now())
       ORDER BY r.updated_at LIMIT $3
       FOR UPDATE OF r SKIP LOCKED
     ), candidates AS (
       SELECT id FROM (SELECT id, 0 AS rank FROM due UNION ALL SELECT id, 1 FROM orphaned) c ORDER BY rank LIMIT $3
     )
     INSERT INTO svc_run_leases (run_id, owner, expires_at)
     SELECT id, $1, now() + $2 * interval '1 millisecond' FROM candidates
     ON CONFLICT (run_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
       WHERE svc_run_leases.expires_at <= now()
     RETURNING run_id`;

/**
 * Claims up to `limit` runs that need a worker and that nobody holds: runs whose wait for a time is
 * over (a retry, a timer: through the partial index on wake_at, oldest due first), then queued or
 * running runs (their process died, or they were resumed elsewhere). Runs waiting for a concurrency
 * slot are not claimed: admission (runs/concurrency) dequeues them first.
 */
export async function claimRuns(db: Queryable, owner: string, ttlMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ run_id: string }>(CLAIM_RUNS_SQL, [owner, ttlMs, limit]);
  return rows.map((r) => r.run_id);
}
