// Workflow validation with stable codes (V001...): errors stop boot, warnings are logged.
import { templatePaths } from './template.js';
import { asRecord, END, ROUTER_OPERATORS, STEP_KINDS, type StepDefinition, type WorkflowDefinition } from './definition.js';
import { resolveSchema } from './schemas.js';
import { NAME_PATTERN, type Add, type Finding, type ValidationInput } from './findings.js';
import { artifactRefs, validateAgent, validateHuman } from './validateSteps.js';
import { validateScheduleInputs, validateSchedules } from './schedules.js';
import { validateTiming } from './validateTiming.js';
import { checkCallCycle, validateWorkflowStep } from './validateChildren.js';
import { validateConcurrency } from './concurrency.js';
import { validatePersonalData } from './personalData.js';
import { validateRetention } from './retention.js';

const STEP_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const WORKFLOW_KEYS = new Set(['kind', 'version', 'metadata', 'spec']);
const METADATA_KEYS = new Set(['name', 'schema_version', 'description', 'required_scope', 'required_group', 'enabled', 'labels']);
const SPEC_KEYS = new Set(['context', 'trigger', 'output', 'steps', 'concurrency', 'retention', 'personal_data']);
const TRIGGER_KEYS = new Set(['http', 'input_schema', 'response_schema', 'mcp', 'schedule']);
const STEP_KEYS: Record<string, string[]> = {
  Functional: ['runner', 'params'],
  Router: ['condition', 'match'],
  Response: ['source', 'mapping', 'status_code'],
  ModelOp: ['model', 'operation', 'payload', 'record_id', 'filters', 'include', 'limit', 'output'],
  APICall: ['http', 'response'],
  MCP: ['mcp', 'response'],
  Agent: ['mode', 'agent'],
  HumanInTheLoop: ['ui', 'human_feedback', 'output_key', 'auth', 'expires_in_s'],
  Wait: ['duration', 'until'],
  Workflow: ['workflow', 'version', 'input', 'output_key', 'wait'],
};
/** Signals a kind can emit besides what routes name (V004). */
const SIGNALS: Record<string, string[]> = {
  Functional: ['default', 'error'],
  ModelOp: ['default', 'error', 'not_found'],
  APICall: ['default', 'error'],
  MCP: ['default', 'error'],
  HumanInTheLoop: ['approve', 'reject'],
  // A Wait with `until` may also signal error: a bad date is known only when the run reads it.
  Wait: ['default'],
  Workflow: ['default', 'error'],
};

export function validateWorkflows(input: ValidationInput): Finding[] {
  const { workflows, isEnabled } = input;
  const findings: Finding[] = [];
  for (const workflow of workflows) findings.push(...validateWorkflow(workflow, input));
  findings.push(...triggerClashes(workflows.filter(isEnabled)));
  return findings;
}

function validateWorkflow(workflow: WorkflowDefinition, input: ValidationInput): Finding[] {
  const { models } = input;
  const findings: Finding[] = [];
  const add: Add = (code, severity, message, step) =>
    findings.push({ code, severity, file: workflow.file, workflow: `${workflow.name} ${workflow.version}`, ...(step ? { step } : {}), message });
  const body = workflow.source;
  const metadata = asRecord(body.metadata);
  const spec = asRecord(body.spec);
  const trigger = asRecord(spec.trigger);
  unknownKeys(body, WORKFLOW_KEYS).forEach((k) => add('V001', 'error', `unknown key ${k}`));
  unknownKeys(metadata, METADATA_KEYS).forEach((k) => add('V001', 'error', `unknown key metadata.${k}`));
  unknownKeys(spec, SPEC_KEYS).forEach((k) => add('V001', 'error', `unknown key spec.${k}`));
  unknownKeys(trigger, TRIGGER_KEYS).forEach((k) => add('V001', 'error', `unknown key spec.trigger.${k}`));
  if (!Array.isArray(spec.steps) || spec.steps.length === 0) add('V001', 'error', 'spec.steps must list at least one step');
  validateSchedules(trigger.schedule, add);
  validateConcurrency(spec.concurrency, add);
  validateRetention(spec.retention, add);
  validatePersonalData(spec.personal_data, add);

  for (const name of [workflow.requiredScope, workflow.requiredGroup]) {
    if (name !== null && !NAME_PATTERN.test(name)) add('V021', 'error', `scope or group "${name}" must match ^[\\w:.\\-/]+$`);
  }
  if (workflow.trigger.isPublic && (workflow.requiredScope || workflow.requiredGroup)) {
    add('V019', 'error', 'public: true cannot be combined with required_scope or required_group');
  }
  if (workflow.trigger.mcpEnabled && !workflow.description) add('V020', 'error', 'an MCP export needs metadata.description');
  if (workflow.trigger.path !== null && !/^\/[\w\-./:{}]*$/.test(workflow.trigger.path))
    add('V001', 'error', `trigger path ${workflow.trigger.path} is not a path`);
  if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(workflow.trigger.method))
    add('V001', 'error', `trigger method ${workflow.trigger.method} is not supported`);
  for (const [role, reference] of [
    ['input', workflow.trigger.inputSchema],
    ['response', workflow.trigger.responseSchema],
  ] as const) {
    const resolved = resolveSchema(workflow, reference, role, models);
    if ('problem' in resolved) add('V009', 'error', `${role}_schema: ${resolved.problem}`);
    else if (role === 'input') validateScheduleInputs(workflow.trigger.schedules, resolved.schema, add);
  }
  for (const model of workflow.contextModels) if (!models.versions(model).length) add('V007', 'error', `spec.context names unknown model ${model}`);

  const ids = new Set<string>();
  for (const step of workflow.steps) {
    if (!STEP_ID.test(step.id)) add('V002', 'error', `step id "${step.id}" must be letters, digits, _ or - (starting with a letter)`, step.id);
    else if (ids.has(step.id)) add('V002', 'error', `step id ${step.id} is used twice`, step.id);
    ids.add(step.id);
  }
  const tools = agentToolRefs(workflow);
  for (const step of workflow.steps) validateStep(workflow, step, ids, input, tools.has(step.id), add);
  checkReachable(workflow, add);
  checkCallCycle(workflow, input.workflows, add);
  return findings;
}

/** `retry` is not an unknown key of any kind: validateTiming says where it belongs (V024). */
function validateStep(workflow: WorkflowDefinition, step: StepDefinition, ids: Set<string>, input: ValidationInput, isTool: boolean, add: Add): void {
  const { models, runners } = input;
  if (!STEP_KINDS.includes(step.kind)) {
    add('V001', 'error', `unknown step kind ${String(step.kind)}`, step.id);
    return;
  }
  unknownKeys(step.config, new Set([...STEP_KEYS[step.kind]!, 'retry'])).forEach((k) =>
    add('V001', 'error', `unknown key ${k} for a ${step.kind} step`, step.id),
  );
  for (const [signal, target] of Object.entries(step.routes)) {
    if (target !== END && !ids.has(target)) add('V003', 'error', `route ${signal} -> ${target}: no such step`, step.id);
  }
  let emitted = step.kind === 'ModelOp' && ['create', 'list'].includes(String(step.config.operation)) ? ['default', 'error'] : (SIGNALS[step.kind] ?? []);
  if (step.kind === 'HumanInTheLoop' && step.config.expires_in_s !== undefined) emitted = [...emitted, 'expired'];
  if (step.kind === 'Wait' && step.config.until !== undefined) emitted = [...emitted, 'error'];
  // A step used as an Agent tool answers the agent, not the routes.
  for (const signal of isTool ? [] : emitted) {
    if (signal === 'default' || signal in step.routes) continue;
    add(
      'V004',
      signal === 'error' ? 'warning' : 'error',
      `signal ${signal} can be emitted but is not routed${signal === 'error' ? ' (the run fails)' : ''}`,
      step.id,
    );
  }
  const config = step.config;
  if (step.kind === 'Functional' && !runners.has(String(config.runner ?? '')))
    add('V006', 'error', `runner ${String(config.runner)} not found in nodes/`, step.id);
  if (step.kind === 'Router') {
    const condition = asRecord(config.condition);
    if (!config.condition && !config.match) add('V001', 'error', 'a Router needs condition or match', step.id);
    if (config.condition && !ROUTER_OPERATORS.includes(condition.operator as (typeof ROUTER_OPERATORS)[number])) {
      add('V001', 'error', `unknown operator ${String(condition.operator)}`, step.id);
    }
  }
  if (step.kind === 'ModelOp') {
    const model = String(config.model ?? '');
    if (!workflow.contextModels.includes(model) || !models.versions(model).length)
      add('V007', 'error', `model ${model} is unknown or not in spec.context`, step.id);
    if (!['create', 'read', 'list', 'update', 'delete'].includes(String(config.operation)))
      add('V001', 'error', `unknown operation ${String(config.operation)}`, step.id);
  }
  if (step.kind === 'APICall' && typeof asRecord(config.http).url !== 'string') add('V001', 'error', 'an APICall needs http.url', step.id);
  if (step.kind === 'Agent') validateAgent(workflow, step, input, add);
  if (step.kind === 'HumanInTheLoop') validateHuman(step, add);
  if (step.kind === 'Workflow') validateWorkflowStep(step, input.workflows, add);
  validateTiming(step, add);
  if (step.kind === 'MCP' && typeof asRecord(config.mcp).tool !== 'string') add('V001', 'error', 'an MCP step needs mcp.tool', step.id);
  for (const { ref, expected } of artifactRefs(step)) {
    const match = /^artifact:\/\/([^@]+)(?:@(.+))?$/.exec(ref);
    const types = match ? input.artifactTypes(match[1]!, match[2]) : [];
    if (!match || types.length === 0) add('V017', 'error', `${ref} does not resolve to an artifact`, step.id);
    else if (expected && !types.some((type) => expected.includes(type)))
      add('V017', 'error', `${ref} is a ${types.join(' / ')}, expected a ${expected.join(' or ')}`, step.id);
    else if (!match[2]) add('V017', 'warning', `${ref} is not pinned to a version`, step.id);
  }
  for (const path of templatePaths(config)) {
    if (path.length === 0 || !/^[\w$-]+(\.[\w$-]+)*$/.test(path)) add('V008', 'error', `template {{ ${path} }} is not a path`, step.id);
  }
}

/** Steps no route or fall-through reaches from the first step (V005). */
function checkReachable(workflow: WorkflowDefinition, add: Add): void {
  const reached = new Set<string>();
  const queue = workflow.steps[0] ? [workflow.steps[0]] : [];
  while (queue.length > 0) {
    const step = queue.shift()!;
    if (reached.has(step.id)) continue;
    reached.add(step.id);
    const targets = Object.values(step.routes);
    if (!('default' in step.routes)) targets.push(workflow.steps[workflow.steps.indexOf(step) + 1]?.id ?? END);
    for (const target of targets) {
      const next = workflow.steps.find((s) => s.id === target);
      if (next) queue.push(next);
    }
  }
  const toolRefs = agentToolRefs(workflow);
  for (const step of workflow.steps) if (!reached.has(step.id) && !toolRefs.has(step.id)) add('V005', 'warning', `step ${step.id} can never run`, step.id);
}

/** Two enabled workflows on the same path and method (V010). */
function triggerClashes(workflows: WorkflowDefinition[]): Finding[] {
  const seen = new Map<string, WorkflowDefinition>();
  const findings: Finding[] = [];
  const latest = new Map<string, WorkflowDefinition>();
  for (const workflow of workflows) latest.set(workflow.name, workflow);
  for (const workflow of latest.values()) {
    if (workflow.trigger.path === null) continue;
    const key = `${workflow.trigger.method} ${workflow.trigger.path.replace(/\/+$/, '') || '/'}`;
    const other = seen.get(key);
    if (other) {
      findings.push({
        code: 'V010',
        severity: 'error',
        file: workflow.file,
        workflow: `${workflow.name} ${workflow.version}`,
        message: `trigger ${key} is also used by ${other.name}`,
      });
    } else seen.set(key, workflow);
  }
  return findings;
}

function agentToolRefs(workflow: WorkflowDefinition): Set<string> {
  return new Set(
    workflow.steps.flatMap((s) =>
      s.kind === 'Agent' ? ((asRecord(s.config.agent).tools as { ref?: string }[] | undefined) ?? []).map((t) => String(t.ref)) : [],
    ),
  );
}

function unknownKeys(value: Record<string, unknown>, allowed: Set<string>): string[] {
  return Object.keys(value).filter((k) => !allowed.has(k));
}
