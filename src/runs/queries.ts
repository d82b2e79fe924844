// Reading runs from svc_runs.
import type { Queryable } from '../db/pool.js';
import type { RunChild } from '../contract/types.js';
import type { RunRow } from './present.js';
import { isTerminal, RUN_STATUSES } from './state.js';

const COLUMNS = `id, workflow, schema_version, status, input, output, error, status_code, current_step, principal_id, tenant,
  approval, pause_requested, wake_at, last_seq, created_at, updated_at, trigger, parent_run_id, forked_from, concurrency_key, slot`;

/** The tenant as db/0012_run_search.sql indexes it: never NULL, so the index order serves the page. */
const TENANT_KEY = `coalesce('=' || tenant, '')`;
const tenantKey = (tenant: string | null) => (tenant === null ? '' : `=${tenant}`);

/** A position in the newest-first order: the last run of a page. */
export interface RunPosition {
  createdAt: string;
  id: string;
}

export interface RunSearch {
  /** Only this principal's runs (null: everyone's, for iam:admin). */
  principalId: string | null;
  tenant: string | null;
  workflow?: string | undefined;
  /** At least one; the caller's list, or every status. */
  statuses: readonly string[];
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  parentRunId?: string | undefined;
  /** Runs strictly after this position (keyset page). */
  after?: RunPosition | undefined;
  limit: number;
  offset: number;
}

/**
 * Newest first, by (created_at, id). One index range per status, each already in page order and cut at
 * what the page can need, merged by the planner (Merge Append): the cost is the page, not the table.
 */
export async function searchRuns(db: Queryable, search: RunSearch): Promise<RunRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = [`${TENANT_KEY} = ${param(tenantKey(search.tenant))}`];
  if (search.principalId !== null) where.push(`principal_id = ${param(search.principalId)}`);
  if (search.workflow !== undefined) where.push(`workflow = ${param(search.workflow)}`);
  if (search.parentRunId !== undefined) where.push(`parent_run_id = ${param(search.parentRunId)}::uuid`);
  if (search.createdAfter !== undefined) where.push(`created_at > ${param(search.createdAfter)}::timestamptz`);
  if (search.createdBefore !== undefined) where.push(`created_at < ${param(search.createdBefore)}::timestamptz`);
  if (search.after) where.push(`(created_at, id) < (${param(search.after.createdAt)}::timestamptz, ${param(search.after.id)}::uuid)`);
  const order = 'ORDER BY created_at DESC, id DESC';
  const needed = param(search.limit + search.offset);
  const branches = search.statuses.map(
    (status) => `(SELECT ${COLUMNS} FROM svc_runs WHERE ${where.join(' AND ')} AND status = ${param(status)} ${order} LIMIT ${needed})`,
  );
  const { rows } = await db.query<RunRow>(
    `SELECT * FROM (${branches.join(' UNION ALL ')}) runs ${order} LIMIT ${param(search.limit)} OFFSET ${param(search.offset)}`,
    params,
  );
  return rows;
}

export async function findRun(db: Queryable, id: string): Promise<RunRow | undefined> {
  const { rows } = await db.query<RunRow>(`SELECT ${COLUMNS} FROM svc_runs WHERE id = $1`, [id]);
  return rows[0];
}

/** The runs a run started (Workflow steps), oldest first: few per run, read through svc_runs_parent_idx. */
export async function findChildren(db: Queryable, parentRunId: string): Promise<RunChild[]> {
  const { rows } = await db.query<RunChild>('SELECT id AS run_id, workflow, status FROM svc_runs WHERE parent_run_id = $1 ORDER BY created_at, id', [
    parentRunId,
  ]);
  return rows;
}

/** Runs not ended yet, by workflow and status (the svc_runs_active gauge, read at scrape time). */
export async function countActiveRuns(db: Queryable): Promise<{ workflow: string; status: string; runs: number }[]> {
  const { rows } = await db.query<{ workflow: string; status: string; runs: number }>(
    // Named statuses (not "not terminal"): the (status, updated_at) index finds them among all the ended runs.
    `SELECT workflow, status, count(*)::int AS runs FROM svc_runs WHERE status = ANY($1::text[]) GROUP BY workflow, status`,
    [RUN_STATUSES.filter((status) => !isTerminal(status))],
  );
  return rows;
}
