// A decided HumanInTheLoop step's outcome (pure): the decision is its signal, the answer goes under output_key.
import type { JsonObject } from '../../kernel/json.js';
import type { StepDefinition } from '../../workflows/definition.js';
import type { StepOutcome } from './types.js';

/**
 * What the step completes with once `decided` (an approval_decided payload) names it; the executor
 * journals it and replay compares against it, so both read a decision the same way.
 */
export function humanOutcome(step: StepDefinition, decided: JsonObject): StepOutcome {
  const outputKey = typeof step.config.output_key === 'string' ? step.config.output_key : step.id;
  const value = { decision: decided.decision ?? null, values: decided.values ?? {}, comment: decided.comment ?? null, decided_by: decided.decided_by ?? null };
  return { signal: String(decided.decision), changes: { set: { [outputKey]: value }, unset: [] } };
}
