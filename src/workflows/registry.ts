// The workflow versions this process knows (files and forks) and which one serves each name and path.
import { compareVersions } from '../models/registry.js';
import type { EnabledFlags } from '../versions/registry.js';
import type { WorkflowDefinition } from './definition.js';

export class WorkflowRegistry {
  private readonly byName = new Map<string, WorkflowDefinition[]>();

  constructor(
    workflows: WorkflowDefinition[],
    private readonly overrides: EnabledFlags,
  ) {
    for (const workflow of workflows) this.add(workflow);
  }

  add(workflow: WorkflowDefinition): void {
    const versions = (this.byName.get(workflow.name) ?? []).filter((w) => w.version !== workflow.version);
    versions.push(workflow);
    versions.sort((a, b) => compareVersions(a.version, b.version));
    this.byName.set(workflow.name, versions);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  versions(name: string): WorkflowDefinition[] {
    return this.byName.get(name) ?? [];
  }

  find(name: string, version: string): WorkflowDefinition | undefined {
    return this.versions(name).find((w) => w.version === version);
  }

  isEnabled(workflow: WorkflowDefinition): boolean {
    return this.overrides.isEnabled('workflow', workflow.name, workflow.version, workflow.enabledByDefault);
  }

  /** The newest enabled version of a workflow. */
  active(name: string): WorkflowDefinition | undefined {
    return [...this.versions(name)].reverse().find((w) => this.isEnabled(w));
  }

  activeAll(): WorkflowDefinition[] {
    return this.names().flatMap((name) => this.active(name) ?? []);
  }

  /** Enabled workflows triggered at `path` (any method), for routing and 405s. */
  byTriggerPath(path: string): WorkflowDefinition[] {
    const normalized = normalizePath(path);
    return this.activeAll().filter((w) => w.trigger.path !== null && normalizePath(w.trigger.path) === normalized);
  }
}

export function normalizePath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}
