// Whether a run's journal still fits the definition it goes on with (pure). A workflow file edited
// under the same version could otherwise route a resumed run through steps its journal never ran,
// or hand a step's recorded outcome to a step of another kind. (DBOS checks a recorded step's name
// against the code the same way before it reuses the step's outcome.)
import { isRunLevel, type RunEvent } from '../events.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';

export const MISMATCH_DETAILS = 'the workflow definition changed under the same version: the steps a run has journaled must keep their ids and kinds';

/** The first step the journal names that the definition lacks or defines with another kind, said plainly; null when all fit. */
export function definitionMismatch(workflow: WorkflowDefinition, journal: readonly RunEvent[]): string | null {
  const kinds = new Map<string, string>(workflow.steps.map((step) => [step.id, step.kind]));
  for (const event of journal) {
    if (isRunLevel(event)) continue;
    const { agent_id: stepId, engine: kind } = event.data;
    const defined = kinds.get(stepId);
    if (defined === kind) continue;
    const where = `workflow ${workflow.name} ${workflow.version}`;
    return defined === undefined
      ? `step ${stepId} is in the run's journal as ${kind}, but ${where} has no step ${stepId}`
      : `step ${stepId} is in the run's journal as ${kind}, but ${where} defines it as ${defined}`;
  }
  return null;
}
