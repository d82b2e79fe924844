// The checks of step kinds with more to them than keys and routes: HumanInTheLoop forms, Agents, artifact refs.
import { FIELD_TYPES, type FieldType } from '../models/definition.js';
import { asRecord, type StepDefinition, type WorkflowDefinition } from './definition.js';
import { NAME_PATTERN, type Add, type ValidationInput } from './findings.js';

/** The form fields a person fills in take the model field types (FIELD_TYPES); `options` makes an enum. */
export function validateHuman(step: StepDefinition, add: Add): void {
  const { human_feedback: form, expires_in_s: expiresIn, auth } = step.config;
  if (expiresIn !== undefined && !(typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0)) {
    add('V022', 'error', 'expires_in_s must be a positive number of seconds', step.id);
  }
  const group = asRecord(auth).required_group;
  if (group !== undefined && (typeof group !== 'string' || !NAME_PATTERN.test(group))) {
    add('V021', 'error', `auth.required_group "${String(group)}" must match ^[\\w:.\\-/]+$`, step.id);
  }
  if (form === undefined) return;
  if (!Array.isArray(form)) {
    add('V022', 'error', 'human_feedback must be a list of fields', step.id);
    return;
  }
  const names = new Set<string>();
  for (const field of form.map(asRecord)) {
    const name = field.name;
    if (typeof name !== 'string' || !FIELD_NAME.test(name)) {
      add('V022', 'error', `human_feedback field name ${JSON.stringify(name)} must be a plain identifier`, step.id);
      continue;
    }
    if (names.has(name)) add('V022', 'error', `human_feedback field ${name} is listed twice`, step.id);
    names.add(name);
    const options = field.options;
    if (options !== undefined && !(Array.isArray(options) && options.length > 0 && options.every((o) => typeof o === 'string'))) {
      add('V022', 'error', `human_feedback field ${name}: options must be a non-empty list of strings`, step.id);
    }
    const type = field.type ?? 'string';
    if (options === undefined && (type === 'enum' || !FIELD_TYPES.includes(type as FieldType))) {
      add(
        'V022',
        'error',
        `human_feedback field ${name}: type ${String(type)} is not one of ${FIELD_TYPES.filter((t) => t !== 'enum').join(', ')} (or give options)`,
        step.id,
      );
    }
  }
}

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Steps an agent can call as tools: they do one thing and answer (no waiting, no routing, no nesting). */
const TOOL_KINDS: readonly string[] = ['Functional', 'APICall', 'MCP', 'ModelOp'];

const RESERVED_EXITS = ['max_iterations', 'budget_exceeded', 'guardrail_violation', 'aborted'];

export function validateAgent(workflow: WorkflowDefinition, step: StepDefinition, input: ValidationInput, add: Add): void {
  const agent = asRecord(step.config.agent);
  const mode = step.config.mode;
  if (mode !== 'completion' && mode !== 'autonomous') add('V011', 'error', 'an Agent needs mode: completion or autonomous', step.id);
  if (typeof agent.model !== 'string') add('V011', 'error', 'an Agent needs agent.model (an AgentModel name)', step.id);
  else if (!input.agentModels.has(agent.model)) add('V011', 'error', `AgentModel ${agent.model} is not loaded (llms/, or its variables are unset)`, step.id);
  const tools = Array.isArray(agent.tools) ? agent.tools.map(asRecord) : [];
  if (mode === 'autonomous' && tools.length === 0) add('V011', 'error', 'an autonomous Agent needs tools', step.id);
  for (const tool of tools) {
    const target = workflow.steps.find((s) => s.id === String(tool.ref));
    if (!target) add('V011', 'error', `tool ref ${String(tool.ref)} is not a step`, step.id);
    else if (!TOOL_KINDS.includes(target.kind))
      add('V011', 'error', `tool ref ${target.id} is a ${target.kind} step; a tool is a Functional, APICall, MCP or ModelOp step`, step.id);
  }
  const outcome = asRecord(agent.outcome);
  for (const value of Array.isArray(outcome.enum) ? outcome.enum.map(String) : []) {
    if (!(value in step.routes)) add('V012', 'error', `outcome ${value} is not routed`, step.id);
  }
  // `aborted` is reserved, but an abort ends the run itself: there is nothing after it to route to.
  for (const exit of RESERVED_EXITS.filter((e) => e !== 'aborted')) {
    if (!(exit in step.routes)) add('V004', 'warning', `reserved exit ${exit} is not routed (the run fails if it happens)`, step.id);
  }
}

/** Every artifact:// reference a step makes, with the type its place requires. */
export function artifactRefs(step: StepDefinition): { ref: string; expected?: readonly string[] }[] {
  const refs: { ref: string; expected?: readonly string[] }[] = [];
  const visit = (value: unknown, expected?: readonly string[]) => {
    if (typeof value === 'string' && value.startsWith('artifact://')) refs.push({ ref: value, ...(expected ? { expected } : {}) });
    else if (Array.isArray(value)) value.forEach((item) => visit(item, expected));
    else if (value && typeof value === 'object') Object.entries(value).forEach(([key, item]) => visit(item, expectedType(key) ?? expected));
  };
  visit(step.config);
  return refs;
}

/** The artifact types a key accepts (system and prompt texts take any prose type). */
function expectedType(key: string): readonly string[] | undefined {
  if (key === 'server') return ['mcp'];
  if (key === 'steering') return ['steering'];
  if (key === 'system' || key === 'prompt') return ['prompt', 'steering', 'skill'];
  if (key === 'guardrails') return ['guardrail'];
  return undefined;
}
