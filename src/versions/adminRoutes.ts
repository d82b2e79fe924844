// /admin/models and /admin/workflows: list a kind's versions, toggle one, fork one (deployment admins).
import path from 'node:path';
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { AlreadyExistsError, NotFoundError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import type { VersionCommands } from './commands.js';
import type { VersionedDefinition, VersionRegistry } from './registry.js';

const forkBody = compileValidator<{ new_version: string }>({
  type: 'object',
  properties: { new_version: { type: 'string', maxLength: 64 } },
  required: ['new_version'],
  additionalProperties: false,
});

export interface VersionAdminDeps<D extends VersionedDefinition> {
  registry: VersionRegistry<D>;
  versions: VersionCommands;
  authenticator: Authenticator;
  projectDir: string;
}

/**
 * The version administration of one kind of definition, under `/admin/<kind>s`.
 *
 * @example
 * app.use(versionAdminRouter({ registry: workflows, versions, authenticator, projectDir }));
 */
export function versionAdminRouter<D extends VersionedDefinition>(deps: VersionAdminDeps<D>): Router {
  const { registry, versions } = deps;
  const { kind } = registry;
  const label = kind[0]!.toUpperCase() + kind.slice(1);
  const base = `/admin/${kind}s`;
  const router = Router();
  const admin = deps.authenticator.requireDeploymentAdmin(`${kind} versions serve every tenant`);

  const versionOr404 = (name: string, version: string) => {
    const definition = registry.find(name, version);
    if (!definition) throw new NotFoundError(`${label} ${name} ${version} not found`);
    return definition;
  };
  const recordOf = (definition: D) => ({ schema_version: definition.version, enabled: registry.isEnabled(definition), ...registry.describe(definition) });

  router.get(base, admin, (_req, res) => {
    res.json(Object.fromEntries(registry.names().map((name) => [name, registry.versions(name).map(recordOf)])));
  });

  router.patch(`${base}/:name/:version/toggle`, admin, async (req, res) => {
    const definition = versionOr404(String(req.params.name), String(req.params.version));
    const { name, version } = definition;
    const enabled = await versions.toggle(kind, name, version, definition.enabledByDefault, requestMetadata(req));
    res.json({ name, schema_version: version, enabled });
  });

  router.post(`${base}/:name/:version/fork`, admin, async (req, res) => {
    const source = versionOr404(String(req.params.name), String(req.params.version));
    const { new_version: newVersion } = forkBody.parse(req.body ?? {});
    if (registry.find(source.name, newVersion)) throw new AlreadyExistsError(`${label} ${source.name} ${newVersion} already exists`);
    const { file } = await versions.fork(
      {
        kind,
        name: source.name,
        sourceVersion: source.version,
        newVersion,
        source: source.source,
        folder: path.join(deps.projectDir, `${kind}s`),
        fileStem: registry.forkFileStem(source),
      },
      requestMetadata(req),
    );
    res.json({ name: source.name, source_version: source.version, new_version: newVersion, file });
  });

  return router;
}
