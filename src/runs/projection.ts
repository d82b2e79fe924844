// svc_runs: one row per run, folded from its journal with the same evolve the executor uses.
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject } from '../kernel/json.js';
import { defineProjection, type Row } from '../projections/types.js';
import { evolveRun, initialRunState, type RunState } from './state.js';
import { asRunEvent, RUN_EVENT_TYPES, runIdOf } from './events.js';

function stateOf(row: Row): RunState {
  return {
    ...initialRunState,
    exists: true,
    version: Number(row.last_seq),
    runId: String(row.id),
    workflow: String(row.workflow),
    schemaVersion: String(row.schema_version),
    input: row.input as JsonObject,
    principal: row.principal_id === null ? null : { user_id: String(row.principal_id), groups: [], scopes: [], tenant: (row.tenant as string | null) ?? null },
    status: row.status as RunState['status'],
    currentStep: (row.current_step as string | null) ?? null,
    output: row.output ?? null,
    statusCode: (row.status_code as number | null) ?? null,
    error: (row.error as RunState['error']) ?? null,
    approval: (row.approval as RunState['approval']) ?? null,
    // The row keeps only whether a pause is pending; who asked is in the journal.
    pauseRequestedBy: row.pause_requested === true ? '' : null,
    wake: row.wake_at ? { status: row.wake_status as 'waiting_retry' | 'waiting_timer', at: new Date(row.wake_at as string).toISOString() } : null,
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
    trigger: (row.trigger as RunState['trigger']) ?? null,
    parentRunId: (row.parent_run_id as string | null) ?? null,
    awaitedChild: (row.awaited_child as string | null) ?? null,
    forkedFrom: (row.forked_from as RunState['forkedFrom']) ?? null,
    slot: row.slot === 'held' || row.slot === 'waiting' ? { key: String(row.concurrency_key ?? ''), state: row.slot } : null,
  };
}

function rowOf(state: RunState): Row {
  return {
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
    wake_status: state.wake?.status ?? null,
    last_seq: state.version,
    created_at: state.createdAt,
    updated_at: state.updatedAt,
    trigger: state.trigger,
    parent_run_id: state.parentRunId,
    awaited_child: state.awaitedChild,
    forked_from: state.forkedFrom,
    concurrency_key: state.slot?.key ?? null,
    slot: state.slot?.state ?? null,
  };
}

export const runsProjection = defineProjection({
  name: 'svc_runs',
  version: 6,
  table: 'svc_runs',
  key: ['id'],
  // run_expired (on the run's retention stream) removes the row: the run outlived its retention.
  eventTypes: [...RUN_EVENT_TYPES, 'run_expired'],
  // run_started opens the run's stream (appended at version 0): its row never exists before it.
  startsRow: ['run_started'],
  keysOf: (event: RecordedEvent) => [{ id: event.type === 'run_expired' ? String((event.data as JsonObject).run_id) : runIdOf(event.streamId) }],
  evolve(row: Row | null, _key, event): Row | null {
    if (event.type === 'run_expired') return null;
    if (!row && event.type !== 'run_started') return null;
    const runEvent = asRunEvent(event);
    const state = evolveRun(row ? stateOf(row) : initialRunState, runEvent, event.recordedAt, event.streamPosition);
    // The context is not kept here: it lives in the journal.
    return rowOf({ ...state, context: {} });
  },
});
