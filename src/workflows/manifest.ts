// Workflow manifests (GET /api/_system/workflows): what a client needs to call a workflow, no gates.
import { SLOW_KINDS, type WorkflowDefinition } from './definition.js';

export interface WorkflowSummary {
  trigger_path: string;
  trigger_method: string;
  public: boolean;
  has_slow_steps: boolean;
  slow_kinds_present: string[];
}

export interface WorkflowManifest extends WorkflowSummary {
  name: string;
  /** In order; `routes` as written (signal to step id or END): `default` not mapped goes to the next step. */
  steps: { id: string; kind: string; routes: Record<string, string> }[];
  /** spec.concurrency as written (the key template, not a key's value); null without one. */
  concurrency: { limit: number; key: string | null; on_limit: string } | null;
}

/** The path a workflow answers on: its own trigger path, else the generic runs route. */
export function triggerPathOf(workflow: WorkflowDefinition): string {
  return workflow.trigger.path ?? `/api/workflows/${workflow.name}/runs`;
}

export function workflowSummary(workflow: WorkflowDefinition): WorkflowSummary {
  const slow = SLOW_KINDS.filter((kind) => workflow.steps.some((s) => s.kind === kind));
  return {
    trigger_path: triggerPathOf(workflow),
    trigger_method: workflow.trigger.path ? workflow.trigger.method : 'POST',
    public: workflow.trigger.isPublic,
    has_slow_steps: slow.length > 0,
    slow_kinds_present: [...slow],
  };
}

export function workflowManifest(workflow: WorkflowDefinition): WorkflowManifest {
  const { concurrency } = workflow;
  return {
    name: workflow.name,
    ...workflowSummary(workflow),
    steps: workflow.steps.map((s) => ({ id: s.id, kind: s.kind, routes: { ...s.routes } })),
    concurrency: concurrency ? { limit: concurrency.limit, key: concurrency.key, on_limit: concurrency.onLimit } : null,
  };
}
