// Run journal events on `run-<id>` streams. Their type names are the public SSE event names.
import type { JsonObject } from '../kernel/json.js';
import type { NewEvent } from '../eventstore/types.js';

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
] as const;
export type RunEventType = (typeof RUN_EVENT_TYPES)[number];
export const TERMINAL_EVENT_TYPES: readonly RunEventType[] = ['run_completed', 'run_failed', 'run_aborted'];
/**
 * Events other than these are written by the executor that holds the run. (`paused` is written by
 * the executor once a requested pause takes effect, or by the pause route for a run waiting on a
 * person; journals from before pause requests existed have it from the route alone.)
 */
export const CONTROL_EVENT_TYPES: readonly RunEventType[] = ['pause_requested', 'paused', 'resumed', 'steered', 'run_aborted', 'approval_decided'];

/** `agent_id` is the step id (`run` for run-level events), `engine` the step kind (`Workflow`). */
export interface RunEventData extends JsonObject {
  agent_id: string;
  engine: string;
  payload: JsonObject;
}

export const runStream = (runId: string) => `run-${runId}`;
export const RUN_AGENT = 'run';
export const RUN_ENGINE = 'Workflow';

export function runEvent(type: RunEventType, payload: JsonObject, step?: { id: string; kind: string }): NewEvent<RunEventType, RunEventData> {
  return { type, data: { agent_id: step?.id ?? RUN_AGENT, engine: step?.kind ?? RUN_ENGINE, payload } };
}
