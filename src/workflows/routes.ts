// /api/_system/workflows: the manifests of the serving workflow versions, for any signed-in caller.
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { NotFoundError } from '../kernel/errors.js';
import { workflowManifest, workflowSummary } from './manifest.js';
import type { WorkflowRegistry } from './registry.js';

export interface WorkflowManifestDeps {
  workflows: WorkflowRegistry;
  authenticator: Authenticator;
}

export function workflowManifestRouter(deps: WorkflowManifestDeps): Router {
  const { workflows, authenticator } = deps;
  const router = Router();

  router.get('/api/_system/workflows', authenticator.authenticate, (_req, res) => {
    res.json(Object.fromEntries(workflows.activeAll().map((w) => [w.name, workflowSummary(w)])));
  });

  router.get('/api/_system/workflows/:name', authenticator.authenticate, (req, res) => {
    const workflow = workflows.active(String(req.params.name));
    if (!workflow) throw new NotFoundError(`Workflow ${req.params.name} not found`);
    res.json(workflowManifest(workflow));
  });

  return router;
}
