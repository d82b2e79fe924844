// The model versions this process knows (files and forks): what is only the models', over the shared registry.
import { VersionRegistry } from '../versions/registry.js';
import type { EnabledFlags } from '../versions/overrides.js';
import type { ModelDefinition } from './definition.js';

export class ModelRegistry extends VersionRegistry<ModelDefinition> {
  constructor(models: readonly ModelDefinition[], flags: EnabledFlags) {
    super('model', models, flags);
  }

  describe(model: ModelDefinition) {
    return { tablename: model.tablename, datasource: model.datasource, fields: model.fields.map((f) => f.name), description: model.description };
  }

  /** Model files are named by the lower-cased name: models/ticket_v2.yaml. */
  forkFileStem(model: ModelDefinition): string {
    return model.slug;
  }

  /** The newest enabled version whose lower-cased name is `slug` (the /models/{model} segment). */
  activeBySlug(slug: string): ModelDefinition | undefined {
    const name = this.names().find((n) => n.toLowerCase() === slug);
    return name === undefined ? undefined : this.active(name);
  }
}
