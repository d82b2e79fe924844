// The checks of Workflow steps (child runs): V040 no `workflow`, V041 an unknown workflow or version,
// V042 a bad `input` mapping, V043 `output_key` on a step that does not wait, V044 a bad `wait` or
// `output_key`, V045 workflows that call one another in a cycle (runs stop at the depth limit).
import { asRecord, type StepDefinition, type WorkflowDefinition } from './definition.js';
import type { Add } from './findings.js';

const CONTEXT_PATH = /^[\w$-]+(\.[\w$-]+)*$/;

export function validateWorkflowStep(step: StepDefinition, workflows: readonly WorkflowDefinition[], add: Add): void {
  const { workflow: name, version, input, output_key: outputKey, wait } = step.config;
  if (typeof name !== 'string' || name.length === 0) add('V040', 'error', 'a Workflow step needs workflow: the name of the workflow it runs', step.id);
  else {
    const versions = workflows.filter((w) => w.name === name);
    if (versions.length === 0) add('V041', 'error', `workflow ${name} is not defined`, step.id);
    else if (version !== undefined && !versions.some((w) => w.version === String(version)))
      add('V041', 'error', `workflow ${name} has no version ${String(version)} (it has ${versions.map((w) => w.version).join(', ')})`, step.id);
  }
  if (input !== undefined) {
    const mapping = asRecord(input);
    if (input !== mapping) add('V042', 'error', 'input must be a mapping of child input names to context paths', step.id);
    for (const [key, path] of Object.entries(mapping)) {
      if (typeof path !== 'string' || !CONTEXT_PATH.test(path)) add('V042', 'error', `input.${key}: ${JSON.stringify(path)} is not a context path`, step.id);
    }
  }
  if (wait !== undefined && typeof wait !== 'boolean') add('V044', 'error', 'wait must be true or false', step.id);
  if (outputKey !== undefined) {
    if (typeof outputKey !== 'string' || !/^[A-Za-z]\w*$/.test(outputKey))
      add('V044', 'error', 'output_key must be a context key (a letter, then letters, digits or _)', step.id);
    else if (wait === false) add('V043', 'error', 'output_key needs wait: true (a fire-and-forget child has no output for the parent)', step.id);
  }
}

/** Names of the workflows a workflow's Workflow steps start. */
function callees(workflow: WorkflowDefinition): string[] {
  return workflow.steps.flatMap((s) => (s.kind === 'Workflow' && typeof s.config.workflow === 'string' ? [s.config.workflow] : []));
}

/** V045 (a warning): the workflow can reach itself through Workflow steps; such runs fail at the depth limit. */
export function checkCallCycle(workflow: WorkflowDefinition, workflows: readonly WorkflowDefinition[], add: Add): void {
  const calls = new Map<string, Set<string>>();
  for (const w of workflows) calls.set(w.name, new Set([...(calls.get(w.name) ?? []), ...callees(w)]));
  const seen = new Set<string>();
  const queue = callees(workflow);
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === workflow.name) {
      add('V045', 'warning', `workflow ${workflow.name} starts itself through Workflow steps: such runs fail once nested 10 deep`);
      return;
    }
    if (seen.has(name)) continue;
    seen.add(name);
    queue.push(...(calls.get(name) ?? []));
  }
}
