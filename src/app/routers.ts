// Every router of the service, in the order the app mounts them: fixed paths first, workflow trigger paths last.
import type { Router } from 'express';
import pLimit from 'p-limit';
import { approvalRouter } from '../approvals/routes.js';
import { auditRouter } from '../audit/routes.js';
import { artifactRouter } from '../artifacts/routes.js';
import { consoleRouter, readConsoleIndex } from '../console/routes.js';
import { devRouter } from '../dev/routes.js';
import { federationRouter } from '../federation/routes.js';
import { grpcRouter } from '../grpc/routes.js';
import { healthRouter } from '../http/health.js';
import { Reads } from '../http/reads.js';
import { iamAdminRouter } from '../iam/adminRoutes.js';
import { authRouter } from '../iam/authRoutes.js';
import type { Clock } from '../kernel/clock.js';
import { SERVICE_VERSION } from '../kernel/version.js';
import { mcpRouter } from '../mcp/server.js';
import { modelCrudRouter } from '../models/routes.js';
import { scopesRouter } from '../models/scopesRoute.js';
import { docsRouter } from '../openapi/routes.js';
import { erasureRouter } from '../privacy/routes.js';
import { runsRouter } from '../runs/routes.js';
import { openPersonalObject } from '../runs/personal.js';
import { triggerRouter } from '../runs/trigger/routes.js';
import { retentionRouter } from '../runs/retention/routes.js';
import { scheduleAdminRouter } from '../schedules/routes.js';
import { versionAdminRouter } from '../versions/adminRoutes.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { workflowManifestRouter } from '../workflows/routes.js';
import type { Features } from './features.js';
import type { Kernel } from './kernel.js';
import type { LoadedProject } from './project.js';
import { metricsRouter } from './metrics.js';
import { registryRouter } from './registryRoute.js';

export interface RouterInputs {
  readonly kernel: Kernel;
  readonly features: Features;
  readonly project: LoadedProject;
  readonly clock: Clock;
  /** Routers of tests: before the trigger routes, which answer any path a workflow claims. */
  readonly extra: readonly Router[];
}

export function serviceRouters({ kernel, features, project, clock, extra }: RouterInputs): Router[] {
  const { settings, pool, store, follower } = kernel;
  const { models, workflows, versions, authenticator, executor, artifacts, auth, federationProviders } = features;
  const { exposeModelCrud: crudEnabled, projectDir } = settings;
  const reads = new Reads(kernel.reads);
  return [
    ...reads.writeTracker(),
    healthRouter({ database: kernel.probe, version: SERVICE_VERSION, startedAt: Date.now(), horizon: () => kernel.horizon.status() }),
    metricsRouter({ authenticator }),
    authRouter({ auth, authenticator, keys: features.keys }),
    federationRouter({ federation: features.federation, providers: federationProviders, store, authenticator, settings, clock, outbound: features.outbound }),
    iamAdminRouter({ pool, commands: features.commands, auth, authenticator }),
    runsRouter({
      pool,
      reads,
      store,
      follower,
      executor,
      workflows,
      authenticator,
      keys: features.keys,
      starter: features.starter,
      dataKeys: features.dataKeys,
      streamOpens: pLimit(settings.streamOpenConcurrency),
    }),
    approvalRouter({ pool, approvals: features.approvals, authenticator, openDisplay: (display) => openPersonalObject(features.dataKeys, display) }),
    artifactRouter({ catalog: artifacts, authenticator }),
    docsRouter({ workflows, models, crudEnabled }),
    registryRouter({ workflows, models, artifacts, agentModels: project.agentModels, federation: federationProviders, authenticator }),
    mcpRouter({ workflows, models, starter: features.starter, authenticator }),
    grpcRouter({ pool, workflows, starter: features.starter, follower, authenticator, readMaxBytes: settings.bodyLimitBytes }),
    devRouter({ settings, authenticator, auth, consoleIndex: readConsoleIndex() }),
    consoleRouter(),
    workflowManifestRouter({ workflows, authenticator }),
    auditRouter({ pool, reads, store, follower, logger: kernel.logger, keys: features.keys, authenticator, clock, dataKeys: features.dataKeys }),
    erasureRouter({ authenticator, erasers: features.erasers, log: features.erasureLog, clock }),
    versionAdminRouter({ registry: workflows, versions, authenticator, projectDir }),
    versionAdminRouter({ registry: models, versions, authenticator, projectDir }),
    scheduleAdminRouter({ commands: features.schedules, authenticator }),
    retentionRouter({ pool, store, authenticator, clock, sweeper: features.retention }),
    scopesRouter({ registry: models, authenticator, crudEnabled, workflowScopes: () => workflowScopes(workflows) }),
    ...(crudEnabled ? [modelCrudRouter({ pool, reads, registry: models, records: features.records, authenticator, clock })] : []),
    ...extra,
    triggerRouter({ pool, workflows, starter: features.starter, follower, authenticator }),
  ];
}

/** The scope each serving workflow requires, by workflow name. */
function workflowScopes(workflows: WorkflowRegistry): Record<string, string> {
  return Object.fromEntries(workflows.activeAll().flatMap((w) => (w.requiredScope ? [[w.name, w.requiredScope]] : [])));
}
