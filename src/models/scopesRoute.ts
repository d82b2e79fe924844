// GET /admin/scopes (deployment admins): the scope of every exposed CRUD operation, every workflow's, the system's.
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { ADMIN_SCOPE, AUDIT_READ_SCOPE, METRICS_READ_SCOPE } from '../kernel/access.js';
import { accessRule } from './crudAccess.js';
import type { ModelRegistry } from './registry.js';

export interface ScopesDeps {
  registry: ModelRegistry;
  authenticator: Authenticator;
  crudEnabled: boolean;
  /** Scopes workflows require, keyed by workflow name (from the workflow registry). */
  workflowScopes: () => Record<string, string>;
}

export function scopesRouter(deps: ScopesDeps): Router {
  const { registry } = deps;
  const router = Router();
  // Everything under /admin that reaches this router is for deployment admins, paths no route serves included.
  router.use('/admin', deps.authenticator.requireDeploymentAdmin('scopes and definition versions serve every tenant'));

  router.get('/admin/scopes', (_req, res) => {
    const crud: Record<string, Record<string, string>> = {};
    if (deps.crudEnabled) {
      for (const model of registry.activeAll()) {
        if (model.crud.length === 0) continue;
        crud[model.slug] = Object.fromEntries(model.crud.map((operation) => [operation, accessRule(model, operation).scope!]));
      }
    }
    res.json({ crud, workflows: deps.workflowScopes(), system: [ADMIN_SCOPE, AUDIT_READ_SCOPE, METRICS_READ_SCOPE], crud_api_enabled: deps.crudEnabled });
  });

  return router;
}
