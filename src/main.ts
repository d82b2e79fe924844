// Composition root: settings -> database -> migrations -> projections -> event store -> features -> app -> server.
import type { Router } from 'express';
import { ApprovalExpiry } from './approvals/expiry.js';
import { approvalRouter } from './approvals/routes.js';
import { ApprovalService } from './approvals/service.js';
import { ArtifactCatalog } from './artifacts/catalog.js';
import { artifactRouter } from './artifacts/routes.js';
import { createAuthenticator } from './iam/authenticator.js';
import { devRouter } from './dev/routes.js';
import { FederationProviders } from './federation/registry.js';
import { federationRouter } from './federation/routes.js';
import { FederationService } from './federation/service.js';
import { grpcRouter } from './grpc/routes.js';
import { registryRouter } from './app/registryRoute.js';
import { mcpRouter } from './mcp/server.js';
import { docsRouter } from './openapi/routes.js';
import { loadSigningKeys } from './iam/keys.js';
import { authRouter } from './iam/authRoutes.js';
import { AuthService } from './iam/signIn.js';
import { SessionView } from './iam/sessionView.js';
import { TokenService } from './iam/tokens.js';
import type { Settings } from './config/settings.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool, type Pool } from './db/pool.js';
import { RunExecutor } from './runs/engine/executor.js';
import { EventStore, HorizonWatch, LogFollower, WakeUps } from './eventstore/index.js';
import { createApp } from './http/app.js';
import { healthRouter } from './http/health.js';
import { listMountedRoutes, type MountedRoutes } from './http/mountedRoutes.js';
import { listen, type HttpServer } from './http/server.js';
import { IamCommands } from './iam/handlers.js';
import { limitPasswordHashing, warmUpPasswordHashing } from './iam/passwords.js';
import { iamAdminRouter } from './iam/adminRoutes.js';
import { systemClock, type Clock } from './kernel/clock.js';
import type { Logger } from './kernel/logger.js';
import { SERVICE_VERSION } from './kernel/version.js';
import { scopesRouter } from './models/scopesRoute.js';
import { prepareModelTables } from './models/boot.js';
import { RecordCommands } from './models/records.js';
import { ModelRegistry } from './models/registry.js';
import { modelCrudRouter } from './models/routes.js';
import { createOutbound } from './outbound/fetch.js';
import { featureProjections, forkedModel, forkedWorkflow, loadProject, ProjectError, validateProject } from './app/project.js';
import { ProjectionRegistry, rebuildStaleProjections, type RowProjection } from './projections/index.js';
import { runsRouter } from './runs/routes.js';
import { VersionCommands } from './versions/commands.js';
import { versionAdminRouter } from './versions/adminRoutes.js';
import { VersionOverrides } from './versions/overrides.js';
import { WorkflowRegistry } from './workflows/registry.js';
import { workflowManifestRouter } from './workflows/routes.js';
import { triggerRouter } from './runs/trigger/routes.js';
import { formatFinding } from './workflows/validate.js';

export { featureProjections, loadProject, ProjectError };

export interface Kernel {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly database: DatabaseHandle;
  readonly pool: Pool;
  readonly registry: ProjectionRegistry;
  readonly wakeUps: WakeUps;
  readonly store: EventStore;
  readonly follower: LogFollower;
  readonly horizon: HorizonWatch;
  close(): Promise<void>;
}

export interface KernelOptions {
  /** An already opened database (tests, cluster workers); else DATABASE_URL or the embedded one. */
  database?: DatabaseHandle;
  projections?: RowProjection[];
  migrate?: boolean;
  /** Runs after the migrations, before projections are checked (model tables). */
  prepare?: (pool: Pool) => Promise<void>;
}

/** Everything below HTTP: database, migrations, projections, event store, wake-ups. */
export async function startKernel(settings: Settings, logger: Logger, options: KernelOptions = {}): Promise<Kernel> {
  const database = options.database ?? (await openDatabase(settings, logger));
  const pool = createPool({ connectionString: database.url, max: settings.dbPoolSize, connectTimeoutMs: settings.dbConnectTimeoutMs });
  try {
    if (options.migrate !== false) {
      const applied = await migrate(pool);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    }
    await options.prepare?.(pool);
    const registry = new ProjectionRegistry();
    for (const projection of options.projections ?? featureProjections()) registry.register(projection);
    await rebuildStaleProjections(pool, registry, logger);

    const wakeUps = new WakeUps({ connectionString: database.url, logger });
    await wakeUps.start();
    let follower: LogFollower | undefined;
    const store = new EventStore({
      pool,
      projector: registry,
      onCommit: (events) => {
        follower?.publishLocal(events);
        wakeUps.announceCommit();
      },
    });
    follower = new LogFollower(store, wakeUps.wakes$, logger);
    await follower.start();
    const started = follower;
    const horizon = new HorizonWatch(pool, logger, settings.horizonStallSeconds * 1000);
    horizon.start();
    return {
      settings,
      logger,
      database,
      pool,
      registry,
      wakeUps,
      store,
      follower: started,
      horizon,
      async close() {
        horizon.stop();
        started.stop();
        await wakeUps.close();
        await pool.end();
        if (!options.database) await database.stop();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (!options.database) await database.stop().catch(() => undefined);
    throw error;
  }
}

export interface Service {
  readonly kernel: Kernel;
  readonly http: HttpServer;
  readonly url: string;
  readonly executor: RunExecutor;
  /** The routes and path-scoped middleware the app mounted (the OpenAPI coverage test reads them). */
  listMountedRoutes(): MountedRoutes;
  close(): Promise<void>;
}

export interface ServiceOptions extends KernelOptions {
  /** Extra routers (tests). */
  routers?: Router[];
  clock?: Clock;
}

/** The whole service on settings.host:settings.port (port 0 picks a free one). */
export async function startService(settings: Settings, logger: Logger, options: ServiceOptions = {}): Promise<Service> {
  const project = await loadProject(settings.projectDir, settings);
  for (const warning of project.warnings) logger.warn(warning);
  const kernel = await startKernel(settings, logger, {
    ...options,
    projections: options.projections ?? project.projections,
    prepare: (pool) => prepareModelTables(pool, project.models),
  });
  const clock = options.clock ?? systemClock;
  const stops: (() => void | Promise<void>)[] = [];
  try {
    const { store, follower, wakeUps, pool } = kernel;
    const live = { store, follower, wakeUps, logger };

    const overrides = new VersionOverrides(live);
    const models = new ModelRegistry(project.models, overrides);
    const workflows = new WorkflowRegistry(project.workflows, overrides);
    models.followForks(overrides, (document) => {
      const parsed = forkedModel(document);
      if (!parsed.model) logger.warn({ problems: parsed.problems }, 'a forked model version could not be registered');
      return parsed.model;
    });
    workflows.followForks(overrides, forkedWorkflow);
    await overrides.start();
    stops.push(() => overrides.stop());
    const artifacts = new ArtifactCatalog(pool, project.artifacts, store, clock);
    checkWorkflows(project, overrides, await artifacts.uploadedVersions(), logger);

    const keys = await loadSigningKeys(settings.signingKeyHex);
    if (keys.isEphemeral) logger.warn('SVC_SIGNING_KEY is not set: using an ephemeral signing key; tokens die on restart');
    const tokens = new TokenService(keys, settings.tokenTtlSeconds, clock);
    const sessions = new SessionView({ ...live, clock });
    await sessions.start();
    stops.push(() => sessions.stop());
    const commands = new IamCommands(store, clock);
    const auth = new AuthService(pool, commands, tokens, settings.tenantIds, clock);
    const authenticator = createAuthenticator({ tokens, sessions, settings });
    limitPasswordHashing(settings.passwordHashConcurrency);
    void warmUpPasswordHashing();
    // Every request svc sends out (APICall, MCP, LLMs, federation) goes through this one guard.
    const outbound = createOutbound(settings.outbound);
    stops.push(() => outbound.close());
    const federationProviders = new FederationProviders(project.federationProviders, settings, live);
    await federationProviders.start();
    stops.push(() => federationProviders.stop());
    const federation = new FederationService(pool, commands, auth, federationProviders, settings, outbound.fetch);

    const records = new RecordCommands(store);
    const executor = new RunExecutor({
      store,
      follower,
      workflows,
      steps: { pool, runners: project.runners, models, records, artifacts, projectDir: settings.projectDir, fetch: outbound.fetch },
      agents: { models: new Map(project.agentModels.map((m) => [m.name, m])), artifacts, fetch: outbound.fetch },
      clock,
      logger,
      leaseMs: settings.runLeaseMs,
      claimIntervalMs: settings.runClaimIntervalMs,
    });
    await executor.start();
    stops.push(() => executor.stop());
    const approvals = new ApprovalService(pool, store, executor, clock);
    const expiry = new ApprovalExpiry({ pool, store, executor, logger, clock, intervalMs: settings.runClaimIntervalMs });
    expiry.start();
    stops.push(() => expiry.stop());
    const versions = new VersionCommands(store, clock, settings.projectDir);

    const app = createApp({
      logger,
      bodyLimitBytes: settings.bodyLimitBytes,
      routers: [
        healthRouter({ db: pool, version: SERVICE_VERSION, startedAt: Date.now(), horizon: () => kernel.horizon.status() }),
        authRouter({ auth, authenticator, keys }),
        federationRouter({ federation, providers: federationProviders, store, authenticator, settings, clock, outbound }),
        iamAdminRouter({ pool, commands, auth, authenticator }),
        runsRouter({ pool, store, follower, executor, workflows, authenticator }),
        approvalRouter({ pool, approvals, authenticator }),
        artifactRouter({ catalog: artifacts, authenticator }),
        docsRouter({ workflows, models, crudEnabled: settings.exposeModelCrud }),
        registryRouter({ workflows, models, artifacts, agentModels: project.agentModels, federation: federationProviders, authenticator }),
        mcpRouter({ workflows, models, executor, authenticator, syncTimeoutMs: settings.syncTimeoutMs }),
        grpcRouter({ pool, workflows, models, executor, follower, authenticator, readMaxBytes: settings.bodyLimitBytes }),
        devRouter({ settings, authenticator, auth }),
        workflowManifestRouter({ workflows, authenticator }),
        versionAdminRouter({ registry: workflows, versions, authenticator, projectDir: settings.projectDir }),
        versionAdminRouter({ registry: models, versions, authenticator, projectDir: settings.projectDir }),
        scopesRouter({
          registry: models,
          authenticator,
          crudEnabled: settings.exposeModelCrud,
          workflowScopes: () =>
            Object.fromEntries(workflows.activeAll().flatMap((w) => (w.requiredScope ? [[w.name, w.requiredScope]] : []))),
        }),
        ...(settings.exposeModelCrud ? [modelCrudRouter({ pool, registry: models, records, authenticator, clock })] : []),
        ...(options.routers ?? []),
        triggerRouter({ pool, workflows, models, executor, follower, authenticator, syncTimeoutMs: settings.syncTimeoutMs }),
      ],
    });
    const http = await listen(app, settings.host, settings.port);
    logger.info({ url: http.url, version: SERVICE_VERSION, workflows: workflows.names().length, models: models.names().length }, 'svc listening');
    return {
      kernel,
      http,
      url: http.url,
      executor,
      listMountedRoutes: () => listMountedRoutes(app),
      async close() {
        await http.close();
        for (const stop of stops.reverse()) await stop();
        await kernel.close();
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => undefined);
    await kernel.close();
    throw error;
  }
}

/** Errors stop boot; warnings are logged. */
function checkWorkflows(
  project: Awaited<ReturnType<typeof loadProject>>,
  overrides: VersionOverrides,
  uploads: { name: string; version: string; type: string }[],
  logger: Logger,
): void {
  const findings = validateProject(project, overrides, uploads);
  for (const finding of findings.filter((f) => f.severity === 'warning')) logger.warn({ code: finding.code }, formatFinding(finding));
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length > 0) throw new ProjectError(errors.map(formatFinding));
}
