// svc_approvals: every approval a run asked for, and how it was decided.
import type { RecordedEvent } from '../eventstore/types.js';
import { defineProjection, type Row } from '../projections/types.js';
import { asRunEvent, copiedFromOf, runIdOf, type RecordedRunEvent } from '../runs/events.js';

/** The approval an event is about; an abort touches the approval its run waited on, if any. */
function approvalIdOf(event: RecordedRunEvent): string | undefined {
  switch (event.type) {
    case 'approval_requested':
      return event.data.payload.approval.approval_id;
    case 'approval_decided':
    case 'run_aborted':
      return event.data.payload.approval_id;
    default:
      return undefined;
  }
}

function requestedRow(approvalId: string, event: RecordedRunEvent<'approval_requested'>): Row {
  const { approval } = event.data.payload;
  return {
    approval_id: approvalId,
    run_id: runIdOf(event.streamId),
    step_id: event.data.agent_id,
    kind: approval.kind,
    workflow: approval.workflow,
    title: approval.title,
    instruction: approval.instruction ?? null,
    form: approval.form ?? [],
    display: approval.display ?? {},
    required_group: approval.required_group ?? null,
    requester_id: approval.requester_id ?? null,
    tenant: approval.tenant ?? null,
    status: 'pending',
    decision: null,
    decided_by: null,
    decided_at: null,
    values: null,
    comment: null,
    created_at: event.recordedAt,
    expires_at: approval.expires_at ?? null,
  };
}

export const approvalsProjection = defineProjection({
  name: 'svc_approvals',
  version: 2,
  table: 'svc_approvals',
  key: ['approval_id'],
  eventTypes: ['approval_requested', 'approval_decided', 'run_aborted'],
  keysOf(event: RecordedEvent) {
    // A fork's copy of an approval event names its source run's approval, which stays the source's.
    if (copiedFromOf(event)) return [];
    const id = approvalIdOf(asRunEvent(event));
    return id === undefined ? [] : [{ approval_id: id }];
  },
  evolve(row: Row | null, key, recorded): Row | null {
    const event = asRunEvent(recorded);
    if (event.type === 'approval_requested') return requestedRow(String(key.approval_id), event);
    if (!row) return null;
    if (event.type === 'run_aborted') return row.status === 'pending' ? { ...row, status: 'cancelled' } : row;
    if (event.type !== 'approval_decided') return row;
    const { payload } = event.data;
    return {
      ...row,
      status: payload.decision === 'expired' ? 'expired' : 'decided',
      decision: payload.decision,
      decided_by: payload.decided_by,
      decided_at: event.recordedAt,
      values: payload.values ?? null,
      comment: payload.comment ?? null,
    };
  },
});
