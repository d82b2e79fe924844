// /api/_system/workflows (manifests) and /admin/workflows (list, toggle, fork).
import path from 'node:path';
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { AlreadyExistsError, NotFoundError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import type { VersionCommands } from '../versions/commands.js';
import type { WorkflowDefinition } from './definition.js';
import { triggerPathOf, workflowManifest, workflowSummary } from './manifest.js';
import type { WorkflowRegistry } from './registry.js';

const forkBody = compileValidator<{ new_version: string }>({
  type: 'object',
  properties: { new_version: { type: 'string', maxLength: 64 } },
  required: ['new_version'],
  additionalProperties: false,
});

export interface WorkflowRoutesDeps {
  workflows: WorkflowRegistry;
  versions: VersionCommands;
  authenticator: Authenticator;
  projectDir: string;
}

export function workflowVersionRecord(registry: WorkflowRegistry, workflow: WorkflowDefinition) {
  return {
    schema_version: workflow.version,
    enabled: registry.isEnabled(workflow),
    trigger_path: triggerPathOf(workflow),
    trigger_method: workflow.trigger.path ? workflow.trigger.method : 'POST',
    description: workflow.description,
  };
}

export function workflowRoutes(deps: WorkflowRoutesDeps): Router {
  const { workflows, versions, authenticator } = deps;
  const router = Router();

  router.get('/api/_system/workflows', authenticator.authenticate, (_req, res) => {
    res.json(Object.fromEntries(workflows.activeAll().map((w) => [w.name, workflowSummary(w)])));
  });

  router.get('/api/_system/workflows/:name', authenticator.authenticate, (req, res) => {
    const workflow = workflows.active(String(req.params.name));
    if (!workflow) throw new NotFoundError(`Workflow ${req.params.name} not found`);
    res.json(workflowManifest(workflow));
  });

  const admin = authenticator.requireDeploymentAdmin('workflow versions serve every tenant');
  const versionOr404 = (name: string, version: string) => {
    const workflow = workflows.find(name, version);
    if (!workflow) throw new NotFoundError(`Workflow ${name} ${version} not found`);
    return workflow;
  };

  router.get('/admin/workflows', admin, (_req, res) => {
    res.json(Object.fromEntries(workflows.names().map((name) => [name, workflows.versions(name).map((w) => workflowVersionRecord(workflows, w))])));
  });

  router.patch('/admin/workflows/:name/:version/toggle', admin, async (req, res) => {
    const workflow = versionOr404(String(req.params.name), String(req.params.version));
    const enabled = await versions.toggle('workflow', workflow.name, workflow.version, workflow.enabledByDefault, requestMetadata(req));
    res.json({ name: workflow.name, schema_version: workflow.version, enabled });
  });

  router.post('/admin/workflows/:name/:version/fork', admin, async (req, res) => {
    const workflow = versionOr404(String(req.params.name), String(req.params.version));
    const { new_version: newVersion } = forkBody.parse(req.body ?? {});
    if (workflows.find(workflow.name, newVersion)) throw new AlreadyExistsError(`Workflow ${workflow.name} ${newVersion} already exists`);
    const { file } = await versions.fork(
      {
        kind: 'workflow',
        name: workflow.name,
        sourceVersion: workflow.version,
        newVersion,
        source: workflow.source,
        folder: path.join(deps.projectDir, 'workflows'),
        fileStem: workflow.name,
      },
      requestMetadata(req),
    );
    res.json({ name: workflow.name, source_version: workflow.version, new_version: newVersion, file });
  });

  return router;
}
