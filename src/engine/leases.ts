// Run leases: which process executes a run, until when. Claims skip rows another claimer holds.
import type { Queryable } from '../db/pool.js';

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

export async function renewLeases(db: Queryable, runIds: string[], owner: string, ttlMs: number): Promise<void> {
  if (runIds.length === 0) return;
  await db.query(
    `UPDATE svc_run_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE run_id = ANY($1::uuid[]) AND owner = $2`,
    [runIds, owner, ttlMs],
  );
}

export async function releaseLease(db: Queryable, runId: string, owner: string): Promise<void> {
  await db.query('DELETE FROM svc_run_leases WHERE run_id = $1 AND owner = $2', [runId, owner]);
}

/** Claims up to `limit` runs that need a worker (queued or running) and that nobody holds. */
export async function claimRuns(db: Queryable, owner: string, ttlMs: number, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ run_id: string }>(
    `WITH candidates AS (
       SELECT r.id FROM svc_runs r
       WHERE r.status IN ('queued', 'running')
         AND NOT EXISTS (SELECT 1 FROM svc_run_leases l WHERE l.run_id = r.id AND l.expires_at > now())
       ORDER BY r.updated_at LIMIT $3
       FOR UPDATE OF r SKIP LOCKED
     )
     INSERT INTO svc_run_leases (run_id, owner, expires_at)
     SELECT id, $1, now() + $2 * interval '1 millisecond' FROM candidates
     ON CONFLICT (run_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
       WHERE svc_run_leases.expires_at <= now()
     RETURNING run_id`,
    [owner, ttlMs, limit],
  );
  return rows.map((r) => r.run_id);
}
