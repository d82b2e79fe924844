// Who may decide an approval, and the events a decision appends (pure).
import { isAllowed, type Principal } from '../kernel/access.js';
import { isTerminal, type RunState } from '../runs/state.js';
import { ConflictError, NotFoundError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { runEvent, type ApprovalDecided, type RunEvent } from '../runs/events.js';

export const DECIDE_SCOPE = 'approvals:decide';
/** The decision the expiry sweep records. */
export const EXPIRED = 'expired';
export const DECISIONS: Record<string, readonly string[]> = { human: ['approve', 'reject'], tool: ['approve', 'edit', 'reject'] };

export interface ApprovalGate {
  required_group: string | null;
  requester_id: string | null;
  tenant: string | null;
}

/**
 * `approvals:decide` plus the step's group when one is set; the principal that triggered the run
 * never qualifies when a group is required, not even as iam:admin.
 */
export function canDecide(principal: Principal, approval: ApprovalGate): boolean {
  if ((approval.tenant ?? null) !== (principal.tenant ?? null)) return false;
  if (!isAllowed(principal, { scope: DECIDE_SCOPE })) return false;
  if (approval.required_group === null) return true;
  if (approval.requester_id !== null && principal.userId === approval.requester_id) return false;
  return isAllowed(principal, { groups: [approval.required_group] });
}

export interface DecisionInput {
  decision: string;
  values?: JsonObject;
  comment?: string;
  edited_args?: JsonObject;
}

/**
 * approval_decided then decision, only while the run still waits on this very approval and, for a
 * person's decision, before it expires (the sweep that records the expiry may come a little later).
 */
export function decideApproval(state: RunState, approvalId: string, input: DecisionInput, decidedBy: string, now: Date): RunEvent[] {
  if (!state.exists) throw new NotFoundError(`Approval ${approvalId} not found`);
  if (isTerminal(state.status)) throw new ConflictError(`The run is ${state.status}: the approval can no longer be decided`);
  if (state.approval?.approval_id !== approvalId) throw new ConflictError(`Approval ${approvalId} was already decided or expired`);
  const expiresAt = state.approval.expires_at;
  if (input.decision !== EXPIRED && expiresAt !== null && Date.parse(expiresAt) <= now.getTime()) {
    throw new ConflictError(`Approval ${approvalId} expired at ${expiresAt}`);
  }
  const payload: ApprovalDecided = {
    approval_id: approvalId,
    step_id: state.approval.step_id,
    decision: input.decision,
    values: input.values ?? {},
    comment: input.comment ?? null,
    decided_by: decidedBy,
    ...(state.approval.call_id !== undefined ? { call_id: state.approval.call_id } : {}),
    ...(input.edited_args ? { edited_args: input.edited_args } : {}),
  };
  const step = { id: state.approval.step_id, kind: state.approval.kind === 'tool' ? 'Agent' : 'HumanInTheLoop' };
  return [runEvent('approval_decided', payload, step), runEvent('decision', { decision: input.decision, source: decidedBy }, step)];
}
