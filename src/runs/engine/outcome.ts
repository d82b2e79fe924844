// Turning a step outcome into journal events, and the run's end into its final event.
import type { NewEvent } from '../../eventstore/types.js';
import type { JsonObject, JsonValue } from '../../kernel/json.js';
import { ajv } from '../../kernel/validation.js';
import type { ModelRegistry } from '../../models/registry.js';
import { runEvent } from '../events.js';
import { END, nextStepId, type StepDefinition, type WorkflowDefinition } from '../../workflows/definition.js';
import { resolveSchema } from '../../workflows/schemas.js';
import type { StepOutcome } from './steps/types.js';
import { publicView } from '../../workflows/template.js';

/** step_completed (or step_failed for `error`), then run_failed when the signal is not routed. */
export function stepEvents(workflow: WorkflowDefinition, step: StepDefinition, outcome: StepOutcome, durationMs: number): NewEvent[] {
  const route = nextStepId(workflow, step, outcome.signal);
  const next = 'target' in route ? (route.target === END ? null : route.target) : null;
  const failed = outcome.signal === 'error';
  const lastError = (outcome.changes.set._last_error ?? null) as JsonObject | null;
  const events: NewEvent[] = [
    ...(outcome.events ?? []),
    runEvent(
      failed ? 'step_failed' : 'step_completed',
      {
        signal: outcome.signal,
        duration_ms: durationMs,
        changes: { set: outcome.changes.set, unset: outcome.changes.unset },
        next,
        ...(failed && lastError ? { error: lastError } : {}),
        ...(outcome.journal ?? {}),
      },
      step,
    ),
  ];
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
export function finalOutcome(workflow: WorkflowDefinition, context: JsonObject, models: ModelRegistry): NewEvent {
  if ('_response' in context) {
    const output = context._response ?? null;
    const mismatch = responseMismatch(workflow, output, models);
    if (mismatch) return runEvent('run_failed', { error: { message: 'the response does not match response_schema', details: mismatch }, status_code: 500 });
    return runEvent('run_completed', { output, status_code: Number(context._response_status ?? 201) });
  }
  const lastError = context._last_error as JsonObject | undefined;
  if (lastError) {
    return runEvent('run_failed', { error: { message: String(lastError.message ?? 'the run ended on an error route'), details: String(lastError.step ?? '') }, status_code: 400 });
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
