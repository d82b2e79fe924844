// What starting a run asks for and answers, and the run_started event it opens the run's stream with.
import type { JsonObject } from '../../kernel/json.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import { runEvent, type RunPrincipal, type ScheduleTrigger } from '../events.js';
import type { RunState } from '../state.js';
import type { RunRecording } from './recording.js';

export interface StartRun {
  workflow: WorkflowDefinition;
  input: JsonObject;
  principal: RunPrincipal | null;
  trigger: string;
  /** A run id chosen ahead: an Idempotency-Key's claim or a schedule's tick (run_started then opens the stream only once, whoever tries). */
  runId?: string;
  schedule?: ScheduleTrigger;
}

export interface StartedRun {
  runId: string;
  /** The run as journaled when startRun returned (with `commitFirst`: as a 202 describes it). */
  journaled: RunState;
  /** Resolves with the run as journaled when its drive here ends. */
  finished: Promise<RunState>;
  /** When (or whether) run_started reached the journal. */
  recording: Promise<RunRecording>;
}

export function runStarted(runId: string, { workflow, input, principal, trigger, schedule }: StartRun) {
  return runEvent('run_started', {
    run_id: runId,
    workflow: workflow.name,
    schema_version: workflow.version,
    input,
    principal,
    trigger,
    ...(schedule ? { schedule } : {}),
    first_step: workflow.steps[0]?.id ?? null,
  });
}
