// Workflow documents: the typed shape the engine runs (DESIGN section 3).
import type { ProjectDocument } from '../project/documents.js';
import { toConcurrency, type ConcurrencyDefinition } from './concurrency.js';
import { toPersonalData } from './personalData.js';
import { toRunRetention } from './retention.js';
import { toSchedules, type ScheduleDefinition } from './schedules.js';

export const STEP_KINDS = ['Functional', 'Agent', 'MCP', 'APICall', 'Router', 'Response', 'ModelOp', 'HumanInTheLoop', 'Wait', 'Workflow'] as const;
export type StepKind = (typeof STEP_KINDS)[number];
/** Kinds that wait on the outside world (a Workflow step: on a child run): their presence makes a workflow "slow". */
export const SLOW_KINDS: readonly StepKind[] = ['Agent', 'MCP', 'APICall', 'Workflow'];
export const END = 'END';
/** A Router `condition`'s operators. */
export const ROUTER_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'is_empty', 'is_not_empty'] as const;

export interface InlineField {
  name: string;
  type: string;
  required?: boolean;
  enum_values?: string[];
}

/** `context`, `Model.variant`, or an inline field list. */
export type SchemaReference = string | InlineField[];

export interface StepDefinition {
  id: string;
  kind: StepKind;
  description?: string;
  routes: Record<string, string>;
  /** Every other key of the step, as written (kind-specific). */
  config: Record<string, unknown>;
}

export interface WorkflowDefinition {
  name: string;
  version: string;
  description: string | null;
  enabledByDefault: boolean;
  requiredScope: string | null;
  requiredGroup: string | null;
  contextModels: string[];
  trigger: {
    path: string | null;
    method: string;
    isPublic: boolean;
    inputSchema: SchemaReference | null;
    responseSchema: SchemaReference | null;
    mcpEnabled: boolean;
    schedules: ScheduleDefinition[];
  };
  /** spec.concurrency (null: every run starts at once). */
  concurrency: ConcurrencyDefinition | null;
  /** spec.retention.runs in milliseconds (null: SVC_RUN_RETENTION, or kept forever). */
  runRetentionMs?: number | null;
  /** spec.personal_data: top-level input and context keys sealed in the journal (empty: none). */
  personalData?: string[];
  output: string | null;
  steps: StepDefinition[];
  file: string;
  source: Record<string, unknown>;
}

const STEP_COMMON_KEYS = new Set(['id', 'kind', 'description', 'routes']);

/** Reads a document leniently into the typed shape; `validateWorkflows` reports what is wrong with it. */
export function toWorkflowDefinition(document: ProjectDocument): WorkflowDefinition {
  const body = document.body;
  const metadata = asRecord(body.metadata);
  const spec = asRecord(body.spec);
  const trigger = asRecord(spec.trigger);
  const http = asRecord(trigger.http);
  const mcp = asRecord(trigger.mcp);
  const steps = Array.isArray(spec.steps) ? spec.steps : [];
  return {
    name: document.name,
    version: document.version,
    description: typeof metadata.description === 'string' ? metadata.description : null,
    enabledByDefault: metadata.enabled !== false,
    requiredScope: typeof metadata.required_scope === 'string' ? metadata.required_scope : null,
    requiredGroup: typeof metadata.required_group === 'string' ? metadata.required_group : null,
    contextModels: Array.isArray(spec.context) ? spec.context.filter((c): c is string => typeof c === 'string') : [],
    trigger: {
      path: typeof http.path === 'string' ? http.path : null,
      method: typeof http.method === 'string' ? http.method.toUpperCase() : 'POST',
      isPublic: http.public === true,
      inputSchema: schemaReference(trigger.input_schema),
      responseSchema: schemaReference(trigger.response_schema),
      mcpEnabled: mcp.enabled === true,
      schedules: toSchedules(trigger.schedule),
    },
    concurrency: toConcurrency(spec.concurrency),
    runRetentionMs: toRunRetention(spec.retention),
    personalData: toPersonalData(spec.personal_data),
    output: typeof spec.output === 'string' ? spec.output : null,
    steps: steps.map((raw, index) => toStep(asRecord(raw), index)),
    file: document.file,
    source: body,
  };
}

function toStep(raw: Record<string, unknown>, index: number): StepDefinition {
  const config = Object.fromEntries(Object.entries(raw).filter(([key]) => !STEP_COMMON_KEYS.has(key)));
  const routes = asRecord(raw.routes);
  return {
    id: typeof raw.id === 'string' ? raw.id : `#${index + 1}`,
    kind: raw.kind as StepKind,
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    routes: Object.fromEntries(Object.entries(routes).map(([signal, target]) => [String(signal), String(target)])),
    config,
  };
}

function schemaReference(value: unknown): SchemaReference | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value as InlineField[];
  return null;
}

export function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The step a signal leads to: a mapped route, else the next step for `default`; END and undefined end the run. */
export function nextStepId(workflow: WorkflowDefinition, step: StepDefinition, signal: string): { target: string | typeof END } | { unmapped: true } {
  const routed = step.routes[signal];
  if (routed !== undefined) return { target: routed };
  if (signal === 'default') {
    const index = workflow.steps.indexOf(step);
    return { target: workflow.steps[index + 1]?.id ?? END };
  }
  return { unmapped: true };
}

const PURE_KINDS: readonly string[] = ['Router', 'Response'];
const pureTails = new WeakMap<WorkflowDefinition, Map<string, boolean>>();

/**
 * Whether every path from this step to the end of the run passes only Router and Response steps
 * (which compute, and touch nothing outside the process). Memoized per workflow; a pure cycle counts
 * as not ending.
 */
export function endsPurely(workflow: WorkflowDefinition, stepId: string): boolean {
  let known = pureTails.get(workflow);
  if (!known) pureTails.set(workflow, (known = new Map()));
  const memo = known;
  const visit = (id: string, path: Set<string>): boolean => {
    if (id === END) return true;
    const cached = memo.get(id);
    if (cached !== undefined) return cached;
    const step = workflow.steps.find((s) => s.id === id);
    if (!step || !PURE_KINDS.includes(step.kind) || path.has(id)) return false;
    const next = [...Object.values(step.routes), ...('default' in step.routes ? [] : [workflow.steps[workflow.steps.indexOf(step) + 1]?.id ?? END])];
    const pure = next.every((target) => visit(target, new Set([...path, id])));
    memo.set(id, pure);
    return pure;
  };
  return visit(stepId, new Set());
}
