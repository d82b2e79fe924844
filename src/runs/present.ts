// What runs and their events look like over HTTP: descriptors, journal events, client step frames.
import type { RunDescriptor, RunEvent as PresentedRunEvent, RunStatus } from '../contract/types.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../kernel/json.js';
import { publicView } from '../workflows/template.js';
import type { RunState } from './state.js';
import { asRunEvent, runIdOf } from './events.js';

export interface RunRow {
  id: string;
  workflow: string;
  schema_version: string;
  status: string;
  input: JsonObject;
  output: JsonValue;
  error: JsonObject | null;
  status_code: number | null;
  current_step: string | null;
  principal_id: string | null;
  tenant: string | null;
  approval: JsonObject | null;
  pause_requested: boolean;
  wake_at: string | null;
  last_seq: number;
  created_at: string;
  updated_at: string;
  trigger?: JsonObject | null;
  parent_run_id?: string | null;
  forked_from?: JsonObject | null;
  concurrency_key?: string | null;
  slot?: string | null;
}

/** Typed by the contract the client library reads (src/contract/types.ts). */
export function runDescriptor(row: RunRow): RunDescriptor {
  const approval = row.approval;
  return {
    id: row.id,
    workflow: row.workflow,
    schema_version: row.schema_version,
    status: row.status as RunStatus,
    input: publicView(row.input),
    output: row.output ?? null,
    error: (row.error as RunDescriptor['error']) ?? null,
    current_step: row.current_step,
    pause_requested: row.pause_requested,
    wake_at: row.wake_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    trigger: (row.trigger as RunDescriptor['trigger']) ?? null,
    parent_run_id: row.parent_run_id ?? null,
    ...(row.forked_from ? { forked_from: row.forked_from as RunDescriptor['forked_from'] } : {}),
    // Only under spec.concurrency, while the run holds or waits for a slot: other descriptors keep their shape.
    ...(row.slot === 'held' || row.slot === 'waiting' ? { concurrency: { key: row.concurrency_key ?? '', slot: row.slot } } : {}),
    status_url: `/api/runs/${row.id}`,
    events_url: `/api/runs/${row.id}/events`,
    approval: approval
      ? {
          approval_id: String(approval.approval_id),
          kind: String(approval.kind),
          title: String(approval.title ?? ''),
          form: approval.form ?? null,
          decide_url: `/api/approvals/${String(approval.approval_id)}`,
        }
      : null,
  };
}

/** The same descriptor from an in-memory state (answers that cannot wait for a read). */
export function descriptorOfState(state: RunState): RunDescriptor {
  return runDescriptor({
    id: state.runId,
    workflow: state.workflow,
    schema_version: state.schemaVersion,
    status: state.status,
    input: state.input,
    output: state.output,
    error: state.error,
    status_code: state.statusCode,
    current_step: state.currentStep,
    principal_id: state.principal?.user_id ?? null,
    tenant: state.principal?.tenant ?? null,
    approval: state.approval,
    pause_requested: state.pauseRequestedBy !== null,
    wake_at: state.wake?.at ?? null,
    last_seq: state.version,
    created_at: state.createdAt,
    updated_at: state.updatedAt,
    trigger: state.trigger,
    parent_run_id: state.parentRunId,
    forked_from: state.forkedFrom,
    concurrency_key: state.slot?.key ?? null,
    slot: state.slot?.state ?? null,
  });
}

/** Removes engine-owned keys (leading `_`) wherever a payload carries context. */
export function sanitizePayload(payload: JsonObject): JsonObject {
  const result: JsonObject = { ...payload };
  const { changes, input } = payload;
  if (isJsonObject(changes)) {
    const unset = Array.isArray(changes.unset) ? changes.unset : [];
    result.changes = {
      set: publicView(isJsonObject(changes.set) ? changes.set : {}),
      unset: unset.filter((key) => typeof key === 'string' && !key.startsWith('_')),
    };
  }
  if (isJsonObject(input)) result.input = publicView(input);
  return result;
}

/** A journal event as SSE `data` and in exports: `{run_id, seq, ts, type, agent_id, engine, payload}`. */
export function presentRunEvent(event: RecordedEvent): PresentedRunEvent {
  const { data } = asRunEvent(event);
  return {
    run_id: runIdOf(event.streamId),
    seq: event.streamPosition,
    ts: event.recordedAt,
    type: event.type,
    agent_id: data.agent_id,
    engine: data.engine,
    payload: sanitizePayload(data.payload),
  };
}
