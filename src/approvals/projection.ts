// svc_approvals: every approval a run asked for, and how it was decided.
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject } from '../kernel/json.js';
import { defineProjection, type Row } from '../projections/types.js';
import type { RunEventData } from '../runs/events.js';

export const approvalsProjection = defineProjection({
  name: 'svc_approvals',
  version: 2,
  table: 'svc_approvals',
  key: ['approval_id'],
  eventTypes: ['approval_requested', 'approval_decided', 'run_aborted'],
  keysOf(event: RecordedEvent) {
    const payload = (event.data as RunEventData).payload;
    const id = event.type === 'approval_requested' ? (payload.approval as JsonObject).approval_id : payload.approval_id;
    // An abort touches the approval its run waited on, if any.
    return id === undefined || id === null ? [] : [{ approval_id: String(id) }];
  },
  evolve(row: Row | null, key, event): Row | null {
    const data = event.data as RunEventData;
    const payload = data.payload;
    if (event.type === 'approval_requested') {
      const approval = payload.approval as JsonObject;
      return {
        approval_id: key.approval_id!,
        run_id: event.streamId.slice('run-'.length),
        step_id: data.agent_id,
        kind: String(approval.kind),
        workflow: String(approval.workflow),
        title: String(approval.title),
        instruction: (approval.instruction as string | null) ?? null,
        form: approval.form ?? [],
        display: approval.display ?? {},
        required_group: (approval.required_group as string | null) ?? null,
        requester_id: (approval.requester_id as string | null) ?? null,
        tenant: (approval.tenant as string | null) ?? null,
        status: 'pending',
        decision: null,
        decided_by: null,
        decided_at: null,
        values: null,
        comment: null,
        created_at: event.recordedAt,
        expires_at: (approval.expires_at as string | null) ?? null,
      };
    }
    if (!row) return null;
    if (event.type === 'run_aborted') return row.status === 'pending' ? { ...row, status: 'cancelled' } : row;
    return {
      ...row,
      status: String(payload.decision) === 'expired' ? 'expired' : 'decided',
      decision: String(payload.decision),
      decided_by: String(payload.decided_by),
      decided_at: event.recordedAt,
      values: payload.values ?? null,
      comment: (payload.comment as string | null) ?? null,
    };
  },
});
