// The run's events on `run-<id>` streams (the run's journal), each with its payload. Their type
// names are the public SSE event names: stored as written, never renamed.
import type { ChatAnswer } from '../agents/llm.js';
import type { McpToolResult } from '../agents/mcpClient.js';
import type { NewEvent, RecordedEvent } from '../eventstore/types.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../kernel/json.js';

/** Who started the run; steps act with its tenant and user id. */
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

/** What a run asks: a person's decision (a HumanInTheLoop step) or an approval of an Agent's tool call. */
export type Approval = {
  approval_id: string;
  kind: 'human' | 'tool';
  step_id: string;
  /** The tool call it holds back (kind `tool`). */
  call_id?: string;
  workflow: string;
  title: string;
  instruction: string | null;
  form: JsonValue;
  /** The context values (human) or the tool and its arguments (tool) shown to whoever decides. */
  display: JsonObject;
  required_group: string | null;
  requester_id: string | null;
  tenant: string | null;
  expires_at: string | null;
};

export type ApprovalDecided = {
  approval_id: string;
  step_id: string;
  decision: string;
  values: JsonObject;
  comment: string | null;
  decided_by: string;
  call_id?: string;
  /** The tool arguments as a person edited them (decision `edit`). */
  edited_args?: JsonObject;
};

/**
 * What a step's outcome records beside its routing in step_completed (or step_failed): an APICall's
 * request and response, a ModelOp's operation, an MCP call and its result, an Agent's totals.
 */
export type StepReport = {
  /** APICall: method, url, redacted headers, body; MCP: server, tool, arguments. */
  request?: JsonObject;
  response?: { status: number; body: JsonValue };
  failure?: string;
  attempts?: number;
  model?: string;
  operation?: string;
  record_id?: string;
  /** A ModelOp's rendered payload (replay compares it, not generated ids). */
  payload?: JsonValue;
  result?: McpToolResult;
  iterations?: number;
  tokens_used?: number;
};

export type StepFinished = {
  signal: string;
  duration_ms: number;
  changes: { set: JsonObject; unset: string[] };
  /** The step the run goes on with (null: the run ends, or fails on an unrouted signal). */
  next: string | null;
  /** step_failed: the step's `_last_error`. */
  error?: JsonObject;
} & StepReport;

export type RunStarted = {
  run_id: string;
  workflow: string;
  schema_version: string;
  input: JsonObject;
  principal?: RunPrincipal | null;
  trigger: string;
  /** With trigger `schedule`: which tick started the run. */
  schedule?: ScheduleTrigger;
  first_step?: string | null;
  /** The run that started this one as its child (child workflows); absent for a top-level run. */
  parent_run_id?: string | null;
  /** How deep this run is among runs that started runs (a child of a top-level run: 1); absent: 0. */
  depth?: number;
  /** A fork (trigger `fork`): the run and step it was forked from; the events copied from that run follow. */
  forked_from?: ForkedFrom;
};

/** A Workflow step started a child run (its run_started is committed with this event). */
export type ChildStarted = {
  run_id: string;
  workflow: string;
  schema_version: string;
  /** false: fire and forget, the step goes on without waiting for the child. */
  wait: boolean;
};

/** A child run ended; written with the child's terminal event (or its abort) on the parent's stream. */
export type ChildFinished = { run_id: string; status: 'completed' | 'failed' | 'aborted'; output: JsonValue; error?: RunError | null };

/** Where a forked run came from: its journal starts with that run's events before `step_id`. */
export type ForkedFrom = { run_id: string; step_id: string };

/**
 * The metadata mark of an event a fork copied from its source run (the same type and data): the
 * source's run id and the copied event's global position there.
 */
export type CopiedFrom = { run_id: string; global_position: number };

export type ScheduleTrigger = { type: 'schedule'; schedule_id: string; scheduled_at: string };
/** How a run was started, as run detail shows it. */
export type RunTrigger = { type: string; schedule_id?: string; scheduled_at?: string };

export type LlmTurn = {
  iteration: number;
  /** Steer messages given to the model before this answer. */
  steers?: string[];
  response: ChatAnswer;
  /** The step's total so far. */
  tokens_used?: number;
  model: string;
};

/** `iteration` is the turn whose answer asked for the call (journals older than it lack it: the latest turn). */
export type ToolCalled = { iteration?: number; call_id: string; tool: string; args: JsonObject };

export type ToolResult = { iteration?: number; call_id: string; tool: string; signal: string; result: JsonValue; changes?: JsonObject };

export type AgentProgress = {
  type: 'iteration' | 'tool_call' | 'outcome';
  iteration: number;
  tokens_used: number;
  tool_calls?: number;
  tool?: string;
  signal?: string;
};

type ByWhom = { by: string };

/** A failed attempt of a step with `retry`: the step runs again at `next_attempt_at` (attempt + 1). */
export type StepAttemptFailed = {
  attempt: number;
  error: RunError & { name: string };
  next_attempt_at: string;
  duration_ms: number;
} & StepReport;

export interface RunEventPayloads {
  run_started: RunStarted;
  step_started: Record<string, never>;
  step_completed: StepFinished;
  step_failed: StepFinished;
  /** A Router's choice, an Agent's outcome, a decision on an approval. */
  decision: { decision: string; source: string };
  llm_turn: LlmTurn;
  tool_call: ToolCalled;
  tool_result: ToolResult;
  agent_progress: AgentProgress;
  approval_requested: { approval: Approval };
  approval_decided: ApprovalDecided;
  pause_requested: ByWhom;
  paused: ByWhom;
  resumed: ByWhom;
  steered: ByWhom & { message: string };
  run_completed: { output: JsonValue; status_code?: number };
  run_failed: { error: RunError; status_code?: number };
  /** `approval_id`: the approval the run waited on, cancelled with it. */
  run_aborted: ByWhom & { reason: string; approval_id?: string };
  step_attempt_failed: StepAttemptFailed;
  /** A Wait step's timer: the run waits until `fires_at`. */
  timer_started: { fires_at: string };
  timer_fired: { fires_at: string };
  child_started: ChildStarted;
  child_finished: ChildFinished;
  /**
   * The run waits for a slot of its workflow's spec.concurrency: `key` is its key's value ('' without
   * a key), `limit` the limit that was full. Its place in the queue is its arrival (run_started).
   */
  run_queued: { key: string; limit: number };
  /** The run holds one of the `limit` slots of `key` from here until it waits (a person, a time) or ends. */
  run_dequeued: { key: string };
}

export const RUN_EVENT_TYPES = [
  'run_started',
  'step_started',
  'step_completed',
  'step_failed',
  'decision',
  'llm_turn',
  'tool_call',
  'tool_result',
  'agent_progress',
  'approval_requested',
  'approval_decided',
  'pause_requested',
  'paused',
  'resumed',
  'steered',
  'run_completed',
  'run_failed',
  'run_aborted',
  'step_attempt_failed',
  'timer_started',
  'timer_fired',
  'child_started',
  'child_finished',
  'run_queued',
  'run_dequeued',
] as const satisfies readonly (keyof RunEventPayloads)[];
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];
export const TERMINAL_EVENT_TYPES: readonly RunEventType[] = ['run_completed', 'run_failed', 'run_aborted'];
/**
 * Events other than these are written by the executor that holds the run. (`paused` is written by
 * the executor once a requested pause takes effect, or by the pause route for a run waiting on a
 * person; journals from before pause requests existed have it from the route alone.)
 */
export const CONTROL_EVENT_TYPES: readonly RunEventType[] = [
  'pause_requested',
  'paused',
  'resumed',
  'steered',
  'run_aborted',
  'approval_decided',
  'child_finished',
];

/** `agent_id` is the step id (`run` for run-level events), `engine` the step kind (`Workflow`). */
export type RunEventData<T extends RunEventType = RunEventType> = { agent_id: string; engine: string; payload: RunEventPayloads[T] };

/** A run event to append (or as folded): `type` tells its payload apart. */
export type RunEvent<T extends RunEventType = RunEventType> = { [K in T]: NewEvent<K, RunEventData<K>> }[T];
/** A run event as the store gives it back. */
export type RecordedRunEvent<T extends RunEventType = RunEventType> = { [K in T]: RecordedEvent<K, RunEventData<K>> }[T];

export const runStream = (runId: string) => `run-${runId}`;
export const runIdOf = (streamId: string) => streamId.slice('run-'.length);
export const RUN_AGENT = 'run';
export const RUN_ENGINE = 'Workflow';

export function runEvent<T extends RunEventType>(type: T, payload: RunEventPayloads[T], step?: { id: string; kind: string }): NewEvent<T, RunEventData<T>> {
  return { type, data: { agent_id: step?.id ?? RUN_AGENT, engine: step?.kind ?? RUN_ENGINE, payload } };
}

/** The copy mark in an event's metadata (see CopiedFrom), or null for an event the run wrote itself. */
export function copiedFromOf(event: { metadata?: JsonObject | undefined }): CopiedFrom | null {
  const mark = event.metadata?.copied_from;
  return isJsonObject(mark) && typeof mark.run_id === 'string' && typeof mark.global_position === 'number'
    ? { run_id: mark.run_id, global_position: mark.global_position }
    : null;
}

/** Whether the event is the run's own (a pause, an abort, the end), not one of a step. */
export function isRunLevel(event: RunEvent): boolean {
  return event.data.agent_id === RUN_AGENT && event.data.engine === RUN_ENGINE;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set(RUN_EVENT_TYPES);
const CONTROL_TYPES: ReadonlySet<string> = new Set(CONTROL_EVENT_TYPES);

export function isControlEvent(type: string): boolean {
  return CONTROL_TYPES.has(type);
}

/**
 * An event read from a run stream (or an export), narrowed once, here: its type is a run event's and
 * its data has the run event envelope. Payloads are as their writers (the executor, the control and
 * approval routes, an import checked against the export schema) wrote them.
 */
export function asRunEvent(event: RecordedEvent): RecordedRunEvent;
export function asRunEvent(event: NewEvent): RunEvent;
export function asRunEvent(event: NewEvent | RecordedEvent): RunEvent | RecordedRunEvent {
  const { type, data } = event;
  if (!KNOWN_TYPES.has(type) || typeof data.agent_id !== 'string' || typeof data.engine !== 'string' || !isJsonObject(data.payload)) {
    throw new Error(`not a run event: ${type}`);
  }
  // The one place a stored event becomes typed: the checks above are what the type promises.
  return event as RunEvent;
}
