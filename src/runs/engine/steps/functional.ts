// Functional: a runner from nodes/; an object merges into context, a string is the signal.
import { isJsonObject, type JsonObject } from '../../../kernel/json.js';
import { render } from '../../../workflows/template.js';
import { errorNameOf, errorOutcome, NO_CHANGES, type StepExecutor } from './types.js';

export const executeFunctional: StepExecutor = async ({ runId, step, context, visit = 0 }, deps) => {
  const runnerName = String(step.config.runner ?? '');
  const runner = deps.runners.get(runnerName);
  if (!runner) return errorOutcome(`runner ${runnerName} is not loaded`, { step: step.id });
  const params = render(step.config.params ?? {}, context) as JsonObject;
  let result: unknown;
  try {
    // Stable across a resume (the journal says how many visits finished), distinct per Router-loop visit.
    const idempotencyKey = visit === 0 ? `${runId}:${step.id}` : `${runId}:${step.id}:${visit}`;
    result = await runner(structuredClone(context), { id: step.id, params, runId, idempotencyKey });
  } catch (error) {
    return errorOutcome((error as Error)?.message ?? String(error), { step: step.id, name: errorNameOf(error) });
  }
  if (result === undefined || result === null) return { signal: 'default', changes: NO_CHANGES };
  if (typeof result === 'string') return { signal: result, changes: NO_CHANGES };
  let json: unknown;
  try {
    json = JSON.parse(JSON.stringify(result));
  } catch {
    return errorOutcome(`runner ${runnerName} returned a value that is not JSON`, { step: step.id });
  }
  if (!isJsonObject(json)) return errorOutcome(`runner ${runnerName} must return an object, a string or nothing`, { step: step.id });
  const hasBoth = typeof json.signal === 'string' && isJsonObject(json.context) && Object.keys(json).length === 2;
  if (hasBoth) return { signal: json.signal as string, changes: { set: json.context as JsonObject, unset: [] } };
  return { signal: 'default', changes: { set: json, unset: [] } };
};
