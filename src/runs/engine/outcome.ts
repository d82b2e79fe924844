// Turning a step outcome into the run's events, and the run's end into its final event.
import { isJsonObject, type JsonObject, type JsonValue } from '../../kernel/json.js';
import { ajv } from '../../kernel/validation.js';
import type { ModelRegistry } from '../../models/registry.js';
import { runEvent, type RunEvent, type StepFinished } from '../events.js';
import { END, nextStepId, type StepDefinition, type WorkflowDefinition } from '../../workflows/definition.js';
import { resolveSchema } from '../../workflows/schemas.js';
import type { StepOutcome } from './steps/types.js';
import { publicView } from '../../workflows/template.js';

/** step_completed (or step_failed for `error`), then run_failed when the signal is not routed. */
export function stepEvents(workflow: WorkflowDefinition, step: StepDefinition, outcome: StepOutcome, durationMs: number): RunEvent[] {
  const route = nextStepId(workflow, step, outcome.signal);
  const next = 'target' in route ? (route.target === END ? null : route.target) : null;
  const failed = outcome.signal === 'error';
  const lastError = isJsonObject(outcome.changes.set._last_error) ? outcome.changes.set._last_error : null;
  const finished: StepFinished = {
    signal: outcome.signal,
    duration_ms: durationMs,
    changes: { set: outcome.changes.set, unset: outcome.changes.unset },
    next,
    ...(failed && lastError ? { error: lastError } : {}),
    ...outcome.report,
  };
  const events: RunEvent[] = [...(outcome.events ?? []), failed ? runEvent('step_failed', finished, step) : runEvent('step_completed', finished, step)];
  if ('unmapped' in route) {
    const message = failed ? String(lastError?.message ?? `step ${step.id} failed`) : `signal "${outcome.signal}" of step ${step.id} is not routed`;
    events.push(runEvent('run_failed', { error: { message, details: `step ${step.id} (${step.kind})` }, status_code: 500 }));
  }
  return events;
}

/**
 * The output: `_response` of the last Response step, else the `output` key, else every public key.
 * A run that went through an error route and left `_last_error` fails with 400.
 */
export function finalOutcome(workflow: WorkflowDefinition, context: JsonObject, models: ModelRegistry): RunEvent {
  if ('_response' in context) {
    const output = context._response ?? null;
    const mismatch = responseMismatch(workflow, output, models);
    if (mismatch) return runEvent('run_failed', { error: { message: 'the response does not match response_schema', details: mismatch }, status_code: 500 });
    return runEvent('run_completed', { output, status_code: Number(context._response_status ?? 201) });
  }
  const lastError = context._last_error;
  if (lastError) {
    const { message, step } = isJsonObject(lastError) ? lastError : {};
    return runEvent('run_failed', { error: { message: String(message ?? 'the run ended on an error route'), details: String(step ?? '') }, status_code: 400 });
  }
  const output: JsonValue = workflow.output !== null ? (context[workflow.output] ?? null) : publicView(context);
  const mismatch = responseMismatch(workflow, output, models);
  if (mismatch) return runEvent('run_failed', { error: { message: 'the response does not match response_schema', details: mismatch }, status_code: 500 });
  return runEvent('run_completed', { output, status_code: 201 });
}

const compiled = new WeakMap<WorkflowDefinition, ((value: unknown) => string | null) | null>();

function responseMismatch(workflow: WorkflowDefinition, output: JsonValue, models: ModelRegistry): string | null {
  if (workflow.trigger.responseSchema === null) return null;
  let check = compiled.get(workflow);
  if (check === undefined) {
    const resolved = resolveSchema(workflow, workflow.trigger.responseSchema, 'response', models);
    const validate = 'schema' in resolved ? ajv.compile(resolved.schema) : undefined;
    check = validate ? (value: unknown) => (validate(value) ? null : ajv.errorsText(validate.errors)) : null;
    compiled.set(workflow, check);
  }
  return check ? check(output) : null;
}
