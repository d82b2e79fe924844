// /admin/models (list, toggle, fork) and /admin/scopes: deployment admins (iam:admin; with tenants, and the superadmin group).
import path from 'node:path';
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { ADMIN_SCOPE } from '../kernel/access.js';
import { requestMetadata } from '../http/context.js';
import { AlreadyExistsError, NotFoundError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import type { VersionCommands } from '../versions/commands.js';
import type { ModelDefinition } from './definition.js';
import type { ModelRegistry } from './registry.js';
import { accessRule } from './routes.js';

const forkBody = compileValidator<{ new_version: string }>({
  type: 'object',
  properties: { new_version: { type: 'string', maxLength: 64 } },
  required: ['new_version'],
  additionalProperties: false,
});

export interface ModelAdminDeps {
  registry: ModelRegistry;
  versions: VersionCommands;
  authenticator: Authenticator;
  projectDir: string;
  crudEnabled: boolean;
  /** Scopes workflows require, keyed by workflow name (from the workflow registry). */
  workflowScopes: () => Record<string, string>;
}

export function modelVersionRecord(registry: ModelRegistry, model: ModelDefinition) {
  return {
    schema_version: model.version,
    enabled: registry.isEnabled(model),
    tablename: model.tablename,
    datasource: model.datasource,
    fields: model.fields.map((f) => f.name),
    description: model.description,
  };
}

export function modelAdminRouter(deps: ModelAdminDeps): Router {
  const { registry, versions, authenticator } = deps;
  const router = Router();
  router.use('/admin', authenticator.requireDeploymentAdmin('model versions and scopes serve every tenant'));

  const versionOr404 = (name: string, version: string) => {
    const model = registry.find(name, version);
    if (!model) throw new NotFoundError(`Model ${name} ${version} not found`);
    return model;
  };

  router.get('/admin/models', (_req, res) => {
    res.json(Object.fromEntries(registry.names().map((name) => [name, registry.versions(name).map((m) => modelVersionRecord(registry, m))])));
  });

  router.patch('/admin/models/:name/:version/toggle', async (req, res) => {
    const model = versionOr404(String(req.params.name), String(req.params.version));
    const enabled = await versions.toggle('model', model.name, model.version, model.enabledByDefault, requestMetadata(req));
    res.json({ name: model.name, schema_version: model.version, enabled });
  });

  router.post('/admin/models/:name/:version/fork', async (req, res) => {
    const model = versionOr404(String(req.params.name), String(req.params.version));
    const { new_version: newVersion } = forkBody.parse(req.body ?? {});
    if (registry.find(model.name, newVersion)) throw new AlreadyExistsError(`Model ${model.name} ${newVersion} already exists`);
    const { file } = await versions.fork(
      {
        kind: 'model',
        name: model.name,
        sourceVersion: model.version,
        newVersion,
        source: model.source,
        folder: path.join(deps.projectDir, 'models'),
        fileStem: model.slug,
      },
      requestMetadata(req),
    );
    res.json({ name: model.name, source_version: model.version, new_version: newVersion, file });
  });

  router.get('/admin/scopes', (_req, res) => {
    const crud: Record<string, Record<string, string>> = {};
    if (deps.crudEnabled) {
      for (const name of registry.names()) {
        const model = registry.active(name);
        if (!model || model.crud.length === 0) continue;
        crud[model.slug] = Object.fromEntries(model.crud.map((operation) => [operation, accessRule(model, operation).scope!]));
      }
    }
    res.json({ crud, workflows: deps.workflowScopes(), system: [ADMIN_SCOPE], crud_api_enabled: deps.crudEnabled });
  });

  return router;
}
