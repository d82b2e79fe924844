// Reading runs from svc_runs.
import type { Queryable } from '../db/pool.js';
import type { RunRow } from './present.js';

const COLUMNS = `id, workflow, schema_version, status, input, output, error, status_code, current_step, principal_id, tenant,
  approval, pause_requested, wake_at, last_seq, created_at, updated_at`;

export interface RunFilter {
  /** Only this principal's runs (null: everyone's, for iam:admin). */
  principalId: string | null;
  tenant: string | null;
  workflow?: string | undefined;
  status?: string | undefined;
  limit: number;
  offset: number;
}

export async function listRuns(db: Queryable, filter: RunFilter): Promise<RunRow[]> {
  const { rows } = await db.query<RunRow>(
    `SELECT ${COLUMNS} FROM svc_runs
     WHERE ($1::text IS NULL OR principal_id = $1) AND tenant IS NOT DISTINCT FROM $2
       AND ($3::text IS NULL OR workflow = $3) AND ($4::text IS NULL OR status = $4)
     ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`,
    [filter.principalId, filter.tenant, filter.workflow ?? null, filter.status ?? null, filter.limit, filter.offset],
  );
  return rows;
}

export async function findRun(db: Queryable, id: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(`SELECT ${COLUMNS} FROM svc_runs WHERE id = $1`, [id]);
  return rows[0];
}
