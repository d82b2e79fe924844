// One call of a step's executor on a drive, as a step of the run or as an Agent's tool: its input, and
// its outcome's events recorded (a ModelOp's in the transaction of its record write).
import { isJsonObject, type JsonObject } from '../../kernel/json.js';
import type { RunEvent } from '../events.js';
import type { StepDefinition } from '../../workflows/definition.js';
import { timesRun, type Drive } from './drive.js';
import type { DriveWriter } from './driveWriter.js';
import { STEP_EXECUTORS } from './steps/index.js';
import type { StepDeps, StepInput, StepOutcome } from './steps/types.js';

/** What the step's executor gets; a tool call's `args` go into the step's params and on top of the context. */
export function stepInput(drive: Drive, step: StepDefinition, at: string, args?: JsonObject): StepInput {
  const { context, principal } = drive.state;
  const base = { runId: drive.runId, workflow: drive.workflow, principal, at, visit: timesRun(drive, step.id) };
  if (!args) return { ...base, step, context };
  const params = isJsonObject(step.config.params) ? step.config.params : {};
  return { ...base, step: { ...step, config: { ...step.config, params: { ...params, ...args } } }, context: { ...context, ...args } };
}

/**
 * Runs the step's executor and records the events `eventsOf` makes of its outcome. A ModelOp's record
 * write and its events commit together, or neither does; any other step's events are left pending
 * (the caller says when they are flushed).
 */
export async function callStep(
  drive: Drive,
  writer: DriveWriter,
  deps: StepDeps,
  input: StepInput,
  eventsOf: (outcome: StepOutcome) => RunEvent[],
): Promise<StepOutcome> {
  const execute = STEP_EXECUTORS[input.step.kind];
  if (input.step.kind !== 'ModelOp') {
    const outcome = await execute(input, deps);
    for (const event of eventsOf(outcome)) writer.push(drive, event);
    return outcome;
  }
  let written: StepOutcome | undefined;
  await writer.flush(drive, async (tx) => eventsOf((written = await execute(input, deps, tx))));
  // The flush resolved, so its work ran and set the outcome.
  return written!;
}
