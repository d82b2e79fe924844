// A run's state, folded from its journal: what the executor resumes from and the read model shows.
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import type { RunEventData } from './events.js';
import { applyChanges, type ContextChanges } from '../workflows/template.js';

export type RunStatus = 'queued' | 'running' | 'waiting_human' | 'waiting_approval' | 'paused' | 'completed' | 'failed' | 'aborted';
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'aborted'];

export interface RunPrincipal extends JsonObject {
  user_id: string;
  groups: string[];
  scopes: string[];
  tenant: string | null;
}

export interface RunError extends JsonObject {
  message: string;
  details: string;
}

export interface PendingApproval extends JsonObject {
  approval_id: string;
  kind: string;
  step_id: string;
  title: string;
  form: JsonValue;
  expires_at: string | null;
}

export interface RunState {
  exists: boolean;
  /** Position of the last journaled event: the expected version of the next append. */
  version: number;
  runId: string;
  workflow: string;
  schemaVersion: string;
  input: JsonObject;
  principal: RunPrincipal | null;
  context: JsonObject;
  status: RunStatus;
  /** The step to run next (null: nothing left; the run ends). */
  nextStep: string | null;
  currentStep: string | null;
  output: JsonValue;
  statusCode: number | null;
  error: RunError | null;
  /**
   * Who asked for a pause that has not taken effect yet: a step of the run is still running, and
   * the executor writes `paused` once its outcome is journaled (null: no pause pending).
   */
  pauseRequestedBy: string | null;
  /** Steer messages not yet taken by an agent iteration. */
  steers: string[];
  approval: PendingApproval | null;
  /** The decision on the last approval, until the step that asked for it completes. */
  decided: JsonObject | null;
  createdAt: string;
  updatedAt: string;
}

export const initialRunState: RunState = {
  exists: false,
  version: 0,
  runId: '',
  workflow: '',
  schemaVersion: '',
  input: {},
  principal: null,
  context: {},
  status: 'queued',
  nextStep: null,
  currentStep: null,
  output: null,
  statusCode: null,
  error: null,
  pauseRequestedBy: null,
  steers: [],
  approval: null,
  decided: null,
  createdAt: '',
  updatedAt: '',
};

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Folds one journal event; `at` is when it was recorded. */
export function evolveRun(state: RunState, type: string, data: RunEventData, at: string, position: number): RunState {
  const payload = data.payload;
  const next: RunState = { ...state, version: position, updatedAt: at };
  switch (type) {
    case 'run_started':
      return {
        ...next,
        exists: true,
        runId: String(payload.run_id),
        workflow: String(payload.workflow),
        schemaVersion: String(payload.schema_version),
        input: payload.input as JsonObject,
        principal: (payload.principal as RunPrincipal | null) ?? null,
        context: payload.input as JsonObject,
        nextStep: (payload.first_step as string | null) ?? null,
        status: 'queued',
        createdAt: at,
      };
    case 'step_started':
      return isTerminal(state.status) ? next : { ...next, currentStep: data.agent_id, status: state.status === 'paused' ? 'paused' : 'running' };
    case 'step_completed':
    case 'step_failed':
      return {
        ...next,
        context: applyChanges(state.context, payload.changes as unknown as ContextChanges),
        nextStep: (payload.next as string | null) ?? null,
        currentStep: data.agent_id,
        decided: null,
      };
    case 'approval_requested': {
      const approval = payload.approval as PendingApproval;
      return { ...next, status: approval.kind === 'tool' ? 'waiting_approval' : 'waiting_human', approval };
    }
    case 'approval_decided': {
      const waiting = state.status === 'waiting_human' || state.status === 'waiting_approval';
      return { ...next, status: waiting ? 'queued' : state.status, approval: null, decided: payload };
    }
    case 'pause_requested':
      return isTerminal(state.status) ? next : { ...next, pauseRequestedBy: String(payload.by) };
    case 'paused':
      return isTerminal(state.status) ? next : { ...next, status: 'paused', pauseRequestedBy: null };
    case 'resumed':
      // A resume also withdraws a pause that has not taken effect yet.
      if (state.status !== 'paused') return { ...next, pauseRequestedBy: null };
      // A run paused while it waited on an approval goes back to waiting on that same approval.
      if (state.approval) return { ...next, status: state.approval.kind === 'tool' ? 'waiting_approval' : 'waiting_human' };
      return { ...next, status: 'queued' };
    case 'steered':
      return { ...next, steers: [...state.steers, String(payload.message)] };
    case 'run_completed':
      return { ...next, status: 'completed', output: payload.output ?? null, statusCode: Number(payload.status_code ?? 201), approval: null, pauseRequestedBy: null };
    case 'run_failed':
      return { ...next, status: 'failed', error: payload.error as RunError, statusCode: Number(payload.status_code ?? 500), approval: null, pauseRequestedBy: null };
    case 'run_aborted':
      return { ...next, status: 'aborted', approval: null, pauseRequestedBy: null };
    default:
      return next;
  }
}

export function foldRun(events: readonly RecordedEvent[], from: RunState = initialRunState): RunState {
  return events.reduce((state, e) => evolveRun(state, e.type, e.data as RunEventData, e.recordedAt, e.streamPosition), from);
}
