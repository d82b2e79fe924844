// The model versions this process knows (files and forks) and which one serves each name.
import type { EnabledFlags } from '../versions/registry.js';
import type { ModelDefinition } from './definition.js';

/** v2 < v10: versions compare by their digit runs as numbers. */
export function compareVersions(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' });
}

export class ModelRegistry {
  private readonly byName = new Map<string, ModelDefinition[]>();

  constructor(
    models: ModelDefinition[],
    private readonly overrides: EnabledFlags,
  ) {
    for (const model of models) this.add(model);
  }

  add(model: ModelDefinition): void {
    const versions = (this.byName.get(model.name) ?? []).filter((m) => m.version !== model.version);
    versions.push(model);
    versions.sort((a, b) => compareVersions(a.version, b.version));
    this.byName.set(model.name, versions);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  versions(name: string): ModelDefinition[] {
    return this.byName.get(name) ?? [];
  }

  all(): ModelDefinition[] {
    return [...this.byName.values()].flat();
  }

  find(name: string, version: string): ModelDefinition | undefined {
    return this.versions(name).find((m) => m.version === version);
  }

  isEnabled(model: ModelDefinition): boolean {
    return this.overrides.isEnabled('model', model.name, model.version, model.enabledByDefault);
  }

  /** The newest enabled version of a model, by name. */
  active(name: string): ModelDefinition | undefined {
    return [...this.versions(name)].reverse().find((m) => this.isEnabled(m));
  }

  /** The newest enabled version whose lower-cased name is `slug` (the /models/{model} segment). */
  activeBySlug(slug: string): ModelDefinition | undefined {
    const name = this.names().find((n) => n.toLowerCase() === slug);
    return name === undefined ? undefined : this.active(name);
  }
}
