// The workflow versions this process knows (files and forks): what is only the workflows', over the shared registry.
import { VersionRegistry } from '../versions/registry.js';
import type { EnabledFlags } from '../versions/overrides.js';
import type { WorkflowDefinition } from './definition.js';
import { workflowSummary } from './manifest.js';

export class WorkflowRegistry extends VersionRegistry<WorkflowDefinition> {
  constructor(workflows: readonly WorkflowDefinition[], flags: EnabledFlags) {
    super('workflow', workflows, flags);
  }

  describe(workflow: WorkflowDefinition) {
    const { trigger_path, trigger_method } = workflowSummary(workflow);
    return { trigger_path, trigger_method, description: workflow.description };
  }

  forkFileStem(workflow: WorkflowDefinition): string {
    return workflow.name;
  }

  /** Enabled workflows triggered at `path` (any method), for routing and 405s. */
  byTriggerPath(path: string): WorkflowDefinition[] {
    const normalized = normalizePath(path);
    return this.activeAll().filter((w) => w.trigger.path !== null && normalizePath(w.trigger.path) === normalized);
  }
}

function normalizePath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}
