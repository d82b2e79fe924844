// Retention reads: the sweeper's batches (an index range per workflow) and the /admin/retention report.
import type { Queryable } from '../../db/pool.js';

export interface ExpiryCandidate {
  id: string;
  workflow: string;
  /** As PostgreSQL writes a timestamptz (the pool reads them as text). */
  ended_at: string;
}

/** Ended runs of `workflow` that ended before `endedBefore` and are not held, oldest first, at most `limit`. */
export async function expiryCandidates(db: Queryable, workflow: string, endedBefore: Date, limit: number): Promise<ExpiryCandidate[]> {
  const { rows } = await db.query<ExpiryCandidate>(
    `SELECT r.id, r.workflow, r.updated_at AS ended_at FROM svc_runs r
     WHERE r.workflow = $1 AND r.status IN ('completed', 'failed', 'aborted') AND r.updated_at < $2
       AND NOT EXISTS (SELECT 1 FROM svc_run_retention h WHERE h.run_id = r.id AND h.held)
     ORDER BY r.updated_at LIMIT $3`,
    [workflow, endedBefore, limit],
  );
  return rows;
}

export async function findRunRef(db: Queryable, runId: string): Promise<{ id: string; workflow: string } | undefined> {
  const { rows } = await db.query<{ id: string; workflow: string }>('SELECT id, workflow FROM svc_runs WHERE id = $1', [runId]);
  return rows[0];
}

export interface RetentionRow {
  run_id: string;
  workflow: string;
  held_at: string | null;
  held_by: string | null;
  hold_reason: string | null;
  ended_at: string | null;
  expired_at: string | null;
}

/** What is held (newest hold first) and what expired (newest first), each at most `limit`. */
export async function retentionReport(db: Queryable, limit: number): Promise<{ held: RetentionRow[]; expired: RetentionRow[] }> {
  const columns = 'run_id, workflow, held_at, held_by, hold_reason, ended_at, expired_at';
  const [held, expired] = await Promise.all([
    db.query<RetentionRow>(`SELECT ${columns} FROM svc_run_retention WHERE held ORDER BY held_at DESC, run_id LIMIT $1`, [limit]),
    db.query<RetentionRow>(`SELECT ${columns} FROM svc_run_retention WHERE expired_at IS NOT NULL ORDER BY expired_at DESC, run_id LIMIT $1`, [limit]),
  ]);
  return { held: held.rows, expired: expired.rows };
}
