// A run's state, folded from its journal: what the executor resumes from and the read model shows.
import type { JsonObject, JsonValue } from '../kernel/json.js';
import type { Approval, ApprovalDecided, ChildFinished, ForkedFrom, RecordedRunEvent, RunError, RunEvent, RunPrincipal, RunTrigger } from './events.js';
import { applyChanges } from '../workflows/template.js';

/** The state names who started the run as its run_started event does. */
export type { RunPrincipal } from './events.js';

import { RUN_STATUSES, type RunStatus } from '../contract/types.js';

export { RUN_STATUSES, type RunStatus };
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'aborted'];
/** Nothing of the run runs: it waits for a resume or a decision (not for a worker). */
export const WAITING_STATUSES: readonly RunStatus[] = ['paused', 'waiting_human', 'waiting_approval', 'waiting_child'];
/** Nothing of the run runs until a time: a step's next attempt, or a Wait step's timer. Claims pick it up then. */
export type TimedStatus = 'waiting_retry' | 'waiting_timer';
export const TIMED_STATUSES: readonly RunStatus[] = ['waiting_retry', 'waiting_timer'];

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
  approval: Approval | null;
  /** The decision on the last approval, until the step that asked for it completes. */
  decided: ApprovalDecided | null;
  /** The time the run waits for (kept while it is paused, so a resume returns to waiting). */
  wake: { status: TimedStatus; at: string } | null;
  createdAt: string;
  updatedAt: string;
  /** As run_started says: `{type}`, with a schedule's tick for `schedule`. */
  trigger: RunTrigger | null;
  /** The run that started this one (a Workflow step's child); null for a top-level run. */
  parentRunId: string | null;
  /** 0 for a top-level run, its parent's depth + 1 for a child. */
  depth: number;
  /** The child run a Workflow step with `wait: true` waits for (kept while the run is paused). */
  awaitedChild: string | null;
  /** How the awaited child ended, until the step that started it completes. */
  childFinished: ChildFinished | null;
  /** A fork's source run and step, as its run_started says (null: not a fork). */
  forkedFrom: ForkedFrom | null;
  /**
   * Its place under spec.concurrency: waiting for a slot of `key`, or holding one (null: neither; a
   * run of a workflow with a limit acquires a slot before its next step runs).
   */
  slot: RunSlot | null;
}

export type RunSlot = { key: string; state: 'held' | 'waiting' };

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
  wake: null,
  createdAt: '',
  updatedAt: '',
  trigger: null,
  parentRunId: null,
  depth: 0,
  awaitedChild: null,
  childFinished: null,
  forkedFrom: null,
  slot: null,
};

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

const waitingOn = (approval: Approval): RunStatus => (approval.kind === 'tool' ? 'waiting_approval' : 'waiting_human');

/** A run gives up its slot when it waits for a person, a time or a child run, is paused, or ends: nothing of it runs then. */
const RELEASES_SLOT: ReadonlySet<string> = new Set([
  'approval_requested',
  'paused',
  'step_attempt_failed',
  'timer_started',
  'run_completed',
  'run_failed',
  'run_aborted',
]);

/** What one event changes in the state (one copy of the state per event: a fold does this for every event). */
type Change = Partial<RunState>;
const UNCHANGED: Change = Object.freeze({});

/** Folds one journal event; `at` is when it was recorded. */
export function evolveRun(state: RunState, event: RunEvent, at: string, position: number): RunState {
  const change = changeOf(state, event, at);
  const status = change.status ?? state.status;
  // A parent waiting for its child gives its slot up too (a child of a workflow of the same limit would otherwise wait on its parent).
  const releases = RELEASES_SLOT.has(event.type) || (event.type === 'child_started' && status === 'waiting_child');
  const slot = releases ? null : change.slot !== undefined ? change.slot : state.slot;
  return { ...state, ...change, version: position, updatedAt: at, slot };
}

function changeOf(state: RunState, event: RunEvent, at: string): Change {
  if (isTimedEvent(event)) return timedChange(state, event);
  switch (event.type) {
    case 'run_started':
      return startedChange(event, at);
    case 'step_started':
      if (isTerminal(state.status)) return UNCHANGED;
      return { currentStep: event.data.agent_id, status: state.status === 'paused' ? 'paused' : 'running', wake: null };
    case 'step_completed':
    case 'step_failed': {
      const { payload } = event.data;
      return {
        wake: null,
        context: applyChanges(state.context, payload.changes),
        nextStep: payload.next ?? null,
        currentStep: event.data.agent_id,
        decided: null,
        childFinished: null,
      };
    }
    case 'approval_requested':
      return { status: waitingOn(event.data.payload.approval), approval: event.data.payload.approval };
    case 'approval_decided': {
      const waiting = state.status === 'waiting_human' || state.status === 'waiting_approval';
      return { status: waiting ? 'queued' : state.status, approval: null, decided: event.data.payload };
    }
    case 'pause_requested':
    case 'paused':
    case 'resumed':
    case 'steered':
      return controlChange(state, event);
    case 'run_completed':
    case 'run_failed':
    case 'run_aborted':
      return endChange(event);
    case 'child_started':
    case 'child_finished':
      return childChange(state, event);
    case 'decision':
    case 'llm_turn':
    case 'tool_call':
    case 'tool_result':
    case 'agent_progress':
      return UNCHANGED;
    case 'run_queued':
    case 'run_dequeued':
      return queueChange(state, event);
    default:
      return unknownEvent(event);
  }
}

function startedChange(event: RunEvent<'run_started'>, at: string): Change {
  const { payload } = event.data;
  return {
    exists: true,
    runId: payload.run_id,
    workflow: payload.workflow,
    schemaVersion: payload.schema_version,
    input: payload.input,
    principal: payload.principal ?? null,
    context: payload.input,
    nextStep: payload.first_step ?? null,
    status: 'queued',
    createdAt: at,
    trigger: payload.schedule ?? { type: payload.trigger },
    parentRunId: payload.parent_run_id ?? null,
    depth: payload.depth ?? 0,
    forkedFrom: payload.forked_from ?? null,
  };
}

/** A Workflow step waits for its child (`waiting_child`) until the child's end is journaled here. */
function childChange(state: RunState, event: RunEvent<'child_started' | 'child_finished'>): Change {
  if (isTerminal(state.status)) return UNCHANGED;
  if (event.type === 'child_started') {
    if (!event.data.payload.wait) return UNCHANGED;
    return { status: state.status === 'paused' ? 'paused' : 'waiting_child', awaitedChild: event.data.payload.run_id };
  }
  // A fire-and-forget child's end is only recorded; the awaited one's end sends the run on.
  if (event.data.payload.run_id !== state.awaitedChild) return UNCHANGED;
  return { status: state.status === 'paused' ? 'paused' : 'queued', awaitedChild: null, childFinished: event.data.payload };
}

function controlChange(state: RunState, event: RunEvent<'pause_requested' | 'paused' | 'resumed' | 'steered'>): Change {
  switch (event.type) {
    case 'pause_requested':
      return isTerminal(state.status) ? UNCHANGED : { pauseRequestedBy: event.data.payload.by };
    case 'paused':
      return isTerminal(state.status) ? UNCHANGED : { status: 'paused', pauseRequestedBy: null };
    case 'resumed':
      // A resume also withdraws a pause that has not taken effect yet.
      if (state.status !== 'paused') return { pauseRequestedBy: null };
      // A run paused while it waited on an approval goes back to waiting on that same approval.
      if (state.approval) return { status: waitingOn(state.approval) };
      if (state.wake) return { status: state.wake.status };
      if (state.awaitedChild) return { status: 'waiting_child' };
      return { status: 'queued' };
    case 'steered':
      return { steers: [...state.steers, event.data.payload.message] };
  }
}

type TimedEvent = RunEvent<'step_attempt_failed' | 'timer_started' | 'timer_fired'>;
const TIMED_EVENT_TYPES: ReadonlySet<string> = new Set(['step_attempt_failed', 'timer_started', 'timer_fired']);
const isTimedEvent = (event: RunEvent): event is TimedEvent => TIMED_EVENT_TYPES.has(event.type);

function timedChange(state: RunState, event: TimedEvent): Change {
  if (isTerminal(state.status)) return UNCHANGED;
  // A pause that took effect first keeps the run paused; the wake is kept for its resume.
  const status = (waiting: RunStatus): RunStatus => (state.status === 'paused' ? 'paused' : waiting);
  switch (event.type) {
    case 'step_attempt_failed':
      return { status: status('waiting_retry'), wake: { status: 'waiting_retry', at: event.data.payload.next_attempt_at } };
    case 'timer_started':
      return { status: status('waiting_timer'), wake: { status: 'waiting_timer', at: event.data.payload.fires_at } };
    case 'timer_fired':
      return { status: status('running'), wake: null };
  }
}

/**
 * Queued, the run keeps what it waited for (a due timer, a decision): once it has a slot it goes on
 * from there, a due wake first.
 */
function queueChange(state: RunState, event: RunEvent<'run_queued' | 'run_dequeued'>): Change {
  if (isTerminal(state.status)) return UNCHANGED;
  const { key } = event.data.payload;
  if (event.type === 'run_queued') return { status: 'queued', slot: { key, state: 'waiting' } };
  // Holding a slot it executes: `running`, or its due wake first (fired or retried by the drive).
  const status = state.status !== 'queued' ? state.status : state.wake ? state.wake.status : 'running';
  return { status, slot: { key, state: 'held' } };
}

function endChange(event: RunEvent<'run_completed' | 'run_failed' | 'run_aborted'>): Change {
  const ended = { approval: null, pauseRequestedBy: null, wake: null, awaitedChild: null };
  switch (event.type) {
    case 'run_completed':
      return { ...ended, status: 'completed', output: event.data.payload.output ?? null, statusCode: event.data.payload.status_code ?? 201 };
    case 'run_failed':
      return { ...ended, status: 'failed', error: event.data.payload.error, statusCode: event.data.payload.status_code ?? 500 };
    case 'run_aborted':
      return { ...ended, status: 'aborted' };
  }
}

/** Every run event type has its case above: a new one fails to compile until it does. */
function unknownEvent(event: never): never {
  throw new Error(`no evolve for run event ${(event as { type: string }).type}`);
}

export function foldRun(events: readonly RecordedRunEvent[], from: RunState = initialRunState): RunState {
  return events.reduce((state, e) => evolveRun(state, e, e.recordedAt, e.streamPosition), from);
}
