// /api/approvals (pending ones the caller may decide), POST /api/approvals/{id}, POST /api/runs/{id}/human/{agent_id}.
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import type { Approval } from '../contract/types.js';
import type { Pool } from '../db/pool.js';
import { requestMetadata, uuidParam } from '../http/context.js';
import { NotFoundError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import { canDecide, DECIDE_SCOPE } from './decide.js';
import { findApprovalOfStep, pendingApprovals, type ApprovalRow } from './queries.js';
import type { ApprovalService } from './service.js';

const decisionBody = compileValidator<{ decision: string; values?: JsonObject; comment?: string; edited_args?: JsonObject }>({
  type: 'object',
  properties: {
    decision: { type: 'string', maxLength: 32 },
    values: { type: 'object' },
    comment: { type: 'string', maxLength: 10_000 },
    edited_args: { type: 'object' },
  },
  required: ['decision'],
  additionalProperties: false,
});

/** Typed by the contract the client library reads (src/contract/types.ts). */
export function presentApproval(row: ApprovalRow): Approval {
  return {
    approval_id: row.approval_id,
    run_id: row.run_id,
    step_id: row.step_id,
    kind: row.kind as Approval['kind'],
    workflow: row.workflow,
    title: row.title,
    instruction: row.instruction,
    form: row.form,
    display: row.display,
    required_group: row.required_group,
    status: row.status as Approval['status'],
    decision: row.decision,
    decided_by: row.decided_by,
    decided_at: row.decided_at,
    values: row.values,
    comment: row.comment,
    created_at: row.created_at,
    expires_at: row.expires_at,
    decide_url: `/api/approvals/${row.approval_id}`,
  };
}

export interface ApprovalRouteDeps {
  pool: Pool;
  approvals: ApprovalService;
  authenticator: Authenticator;
  /** Opens the sealed spec.personal_data values an approval displays (null once erased). */
  openDisplay?: (display: JsonObject) => Promise<JsonObject>;
}

export function approvalRouter(deps: ApprovalRouteDeps): Router {
  const { pool, approvals, authenticator, openDisplay } = deps;
  const router = Router();
  const present = async (row: ApprovalRow) => presentApproval(openDisplay ? { ...row, display: await openDisplay(row.display) } : row);
  const decider = authenticator.require({ scope: DECIDE_SCOPE });

  router.get('/api/approvals', decider, async (req, res) => {
    const principal = req.principal!;
    const rows = await pendingApprovals(pool, principal.tenant ?? null);
    res.json(await Promise.all(rows.filter((row) => canDecide(principal, row)).map(present)));
  });

  router.post('/api/approvals/:id', decider, async (req, res) => {
    const id = uuidParam(req, 'id', 'Approval');
    const body = decisionBody.parse(req.body ?? {});
    res.json(await present(await approvals.decide(id, body, req.principal!, requestMetadata(req))));
  });

  router.post('/api/runs/:id/human/:agent_id', decider, async (req, res) => {
    const runId = uuidParam(req, 'id', 'Run');
    const approval = await findApprovalOfStep(pool, runId, String(req.params.agent_id), req.principal!.tenant ?? null);
    if (!approval) throw new NotFoundError(`Run ${runId} has no approval for ${req.params.agent_id}`);
    const body = decisionBody.parse(req.body ?? {});
    res.json(await present(await approvals.decide(approval.approval_id, body, req.principal!, requestMetadata(req))));
  });

  return router;
}
