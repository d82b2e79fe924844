// Durable time in a drive: a failed attempt of a step with `retry` journaled with its next attempt's
// time, and the wait for that time (or a Wait step's timer). A wait near enough is held here; a
// longer one releases the run, and the claim query brings it back to any worker once it is due.
import { isJsonObject, type JsonObject } from '../../kernel/json.js';
import type { StepDefinition, WorkflowDefinition } from '../../workflows/definition.js';
import { isRetried, retryIntervalMs, retryPolicyOf } from '../../workflows/retry.js';
import { runEvent, type RunEvent } from '../events.js';
import type { Drive } from './drive.js';
import { stepEvents } from './outcome.js';
import type { StepOutcome } from './steps/types.js';

/** Which attempt of the step's current visit runs next (1-based): failed attempts since it last finished, plus one. */
export function attemptOf(drive: Drive, stepId: string): number {
  let failed = 0;
  for (const event of [...drive.recorded, ...drive.pending]) {
    if (event.data.agent_id !== stepId) continue;
    if (event.type === 'step_attempt_failed') failed++;
    else if (event.type === 'step_completed' || event.type === 'step_failed') failed = 0;
  }
  return failed + 1;
}

export interface AttemptEnd {
  workflow: WorkflowDefinition;
  step: StepDefinition;
  outcome: StepOutcome;
  durationMs: number;
  attempt: number;
  now: Date;
  random?: () => number;
}

/**
 * The events of an attempt's end: step_attempt_failed when it failed and the step's policy grants
 * another attempt (its time computed now, so the journal holds it), else the step's outcome as usual.
 */
export function attemptEvents({ workflow, step, outcome, durationMs, attempt, now, random }: AttemptEnd): RunEvent[] {
  const policy = outcome.signal === 'error' ? retryPolicyOf(step) : null;
  const lastError: JsonObject = isJsonObject(outcome.changes.set._last_error) ? outcome.changes.set._last_error : {};
  const name = typeof lastError.name === 'string' ? lastError.name : 'Error';
  if (!policy || !isRetried(policy, attempt, name)) return stepEvents(workflow, step, outcome, durationMs);
  const { message, step: _step, name: _name, ...rest } = lastError;
  const error = {
    message: typeof message === 'string' ? message : `step ${step.id} failed`,
    details: Object.keys(rest).length ? JSON.stringify(rest) : '',
    name,
  };
  const next = new Date(now.getTime() + retryIntervalMs(policy, attempt, random)).toISOString();
  return [runEvent('step_attempt_failed', { attempt, error, next_attempt_at: next, duration_ms: durationMs, ...outcome.report }, step)];
}

/** What the wait for the run's wake came to: it is due, it was held here (and may be due now), or it is too far to hold. */
export type WakeWait = 'due' | 'held' | 'far';

/** Holds the drive until its wake when that is at most `holdMs` away; a control event cuts the hold short. */
export async function untilWake(drive: Drive, now: Date, holdMs: number): Promise<WakeWait> {
  const wake = drive.state.wake;
  const ms = wake ? Date.parse(wake.at) - now.getTime() : 0;
  if (ms <= 0) return 'due';
  if (ms > holdMs) return 'far';
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      drive.nudge = () => undefined;
      resolve();
    };
    const timer = setTimeout(done, ms);
    drive.nudge = done;
  });
  return 'held';
}
