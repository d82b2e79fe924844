// A HumanInTheLoop step (pure): what it asks for, and its outcome once decided (the decision is its signal).
import { newId } from '../../../kernel/ids.js';
import type { JsonObject } from '../../../kernel/json.js';
import type { StepDefinition } from '../../../workflows/definition.js';
import type { Approval, ApprovalDecided } from '../../events.js';
import type { RunState } from '../../state.js';
import type { StepOutcome } from './types.js';

/**
 * What the step completes with once `decided` (an approval_decided payload) names it; the executor
 * journals it and replay compares against it, so both read a decision the same way.
 */
export function humanOutcome(step: StepDefinition, decided: ApprovalDecided): StepOutcome {
  const outputKey = typeof step.config.output_key === 'string' ? step.config.output_key : step.id;
  const value = { decision: decided.decision ?? null, values: decided.values ?? {}, comment: decided.comment ?? null, decided_by: decided.decided_by ?? null };
  return { signal: String(decided.decision), changes: { set: { [outputKey]: value }, unset: [] } };
}

/** What a HumanInTheLoop step asks: title, instruction, the form, the context keys it shows, who may answer. */
export function humanApproval(step: StepDefinition, workflow: string, state: Pick<RunState, 'context' | 'principal'>, now: Date): Approval {
  const ui = (step.config.ui ?? {}) as JsonObject;
  const shown = Array.isArray(ui.display_context) ? ui.display_context.map(String) : [];
  const display = Object.fromEntries(shown.filter((key) => !key.startsWith('_') && key in state.context).map((key) => [key, state.context[key]!]));
  const expiresIn = Number(step.config.expires_in_s ?? 0);
  const group = ((step.config.auth ?? {}) as JsonObject).required_group;
  return {
    approval_id: newId(),
    kind: 'human',
    step_id: step.id,
    workflow: workflow,
    title: typeof ui.title === 'string' ? ui.title : step.id,
    instruction: typeof ui.instruction === 'string' ? ui.instruction : null,
    form: (step.config.human_feedback ?? []) as JsonObject[],
    display,
    required_group: typeof group === 'string' ? group : null,
    requester_id: state.principal?.user_id ?? null,
    tenant: state.principal?.tenant ?? null,
    expires_at: expiresIn > 0 ? new Date(now.getTime() + expiresIn * 1000).toISOString() : null,
  };
}
