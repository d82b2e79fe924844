// Reading approvals.
import type { Queryable } from '../db/pool.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';

export interface ApprovalRow {
  approval_id: string;
  run_id: string;
  step_id: string;
  kind: string;
  workflow: string;
  title: string;
  instruction: string | null;
  form: JsonValue;
  display: JsonObject;
  required_group: string | null;
  requester_id: string | null;
  tenant: string | null;
  status: string;
  decision: string | null;
  decided_by: string | null;
  decided_at: string | null;
  values: JsonValue;
  comment: string | null;
  created_at: string;
  expires_at: string | null;
}

// Pending only while its run still waits on it: an aborted, failed or finished run leaves its approval row
// `pending`, and such a row must neither be offered to deciders nor be swept for expiry (forever, ahead of real ones).
const STILL_AWAITED = `EXISTS (SELECT 1 FROM svc_runs r WHERE r.id = svc_approvals.run_id AND r.approval->>'approval_id' = svc_approvals.approval_id::text)`;

const COLUMNS = `approval_id, run_id, step_id, kind, workflow, title, instruction, form, display, required_group, requester_id,
  tenant, status, decision, decided_by, decided_at, "values", comment, created_at, expires_at`;

export async function pendingApprovals(db: Queryable, tenant: string | null): Promise<ApprovalRow[]> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM svc_approvals WHERE status = 'pending' AND tenant IS NOT DISTINCT FROM $1 AND ${STILL_AWAITED} ORDER BY created_at, approval_id`,
    [tenant],
  );
  return rows;
}

export async function findApproval(db: Queryable, id: string): Promise<ApprovalRow | undefined> {
  const { rows } = await db.query<ApprovalRow>(`SELECT ${COLUMNS} FROM svc_approvals WHERE approval_id = $1`, [id]);
  return rows[0];
}

/** The latest approval a run of `tenant` asked for at a step (another tenant's run has none). */
export async function findApprovalOfStep(db: Queryable, runId: string, stepId: string, tenant: string | null): Promise<ApprovalRow | undefined> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM svc_approvals WHERE run_id = $1 AND step_id = $2 AND tenant IS NOT DISTINCT FROM $3 ORDER BY created_at DESC LIMIT 1`,
    [runId, stepId, tenant],
  );
  return rows[0];
}

export async function expiredApprovals(db: Queryable, now: Date, limit: number): Promise<ApprovalRow[]> {
  const { rows } = await db.query<ApprovalRow>(
    `SELECT ${COLUMNS} FROM svc_approvals WHERE status = 'pending' AND expires_at <= $1 AND ${STILL_AWAITED} ORDER BY expires_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}
