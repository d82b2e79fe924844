// GET /registry (deployment admins): what this process loaded — workflows, models, artifacts (the caller's
// tenant's uploads), federation providers, agent models.
import { Router } from 'express';
import type { AgentModelDefinition } from '../agents/agentModel.js';
import type { ArtifactCatalog } from '../artifacts/catalog.js';
import type { Authenticator } from '../http/authenticator.js';
import type { FederationProviders } from '../federation/registry.js';
import type { ModelRegistry } from '../models/registry.js';
import type { VersionedDefinition, VersionRegistry } from '../versions/registry.js';
import type { WorkflowRegistry } from '../workflows/registry.js';

export interface RegistryDeps {
  workflows: WorkflowRegistry;
  models: ModelRegistry;
  artifacts: ArtifactCatalog;
  agentModels: readonly AgentModelDefinition[];
  federation: FederationProviders;
  authenticator: Authenticator;
}

export function registryRouter(deps: RegistryDeps): Router {
  const router = Router();
  router.get('/registry', deps.authenticator.requireDeploymentAdmin('the registry describes the whole deployment'), async (req, res) => {
    const { workflows, models } = deps;
    res.json({
      workflows: versionsOf(workflows),
      models: versionsOf(models),
      artifacts: (await deps.artifacts.list(req.principal!.tenant ?? null)).map((a) => ({
        name: a.name,
        version: a.latest_version,
        type: a.type,
        source: a.source,
        enabled: true,
      })),
      federation_providers: deps.federation.list().map((p) => ({ name: p.name, version: 'v1', enabled: p.enabled, provider: p.kind, source: p.source })),
      agent_models: deps.agentModels.map((m) => ({ name: m.name, version: 'v1', enabled: true, model: m.model, base_url: m.baseUrl })),
    });
  });
  return router;
}

/** Every version of every name, enabled or not. */
function versionsOf<D extends VersionedDefinition>(registry: VersionRegistry<D>) {
  return registry.names().flatMap((name) => registry.versions(name).map((d) => ({ name, version: d.version, enabled: registry.isEnabled(d), file: d.file })));
}
