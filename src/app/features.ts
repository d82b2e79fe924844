// Building the features over a started kernel, each after what it needs: definitions and their versions,
// artifacts, identity, outbound requests, federation, then runs and the approvals that wait on them.
import { ApprovalExpiry } from '../approvals/expiry.js';
import { ApprovalService } from '../approvals/service.js';
import { ArtifactCatalog } from '../artifacts/catalog.js';
import { FederationProviders } from '../federation/registry.js';
import { FederationService } from '../federation/service.js';
import type { Authenticator } from '../http/authenticator.js';
import { createAuthenticator } from '../iam/authenticator.js';
import { IamCommands } from '../iam/handlers.js';
import { sealLegacyUsers } from '../iam/legacySeal.js';
import { loadSigningKeys, type SigningKeys } from '../iam/keys.js';
import { Checkpointer } from '../audit/checkpoints.js';
import { limitPasswordHashing, warmUpPasswordHashing } from '../iam/passwords.js';
import { SessionView } from '../iam/sessionView.js';
import { createLoginThrottle, NO_LOGIN_THROTTLE } from '../iam/loginThrottle.js';
import { AuthService } from '../iam/signIn.js';
import { TokenService } from '../iam/tokens.js';
import type { Clock } from '../kernel/clock.js';
import { personalFieldsOf, type ModelDefinition } from '../models/definition.js';
import { ErasureLog, type Erasers } from '../privacy/erasureLog.js';
import { RecordCommands } from '../models/records.js';
import { ModelRegistry } from '../models/registry.js';
import { createOutbound, type Outbound } from '../outbound/fetch.js';
import { RunExecutor } from '../runs/engine/executor.js';
import { RunStarter } from '../runs/trigger/startRun.js';
import { RetentionSweeper } from '../runs/retention/sweeper.js';
import { IdempotencyKeys } from '../runs/idempotency/keys.js';
import { TickFirer } from '../schedules/fire.js';
import { ScheduleCommands } from '../schedules/service.js';
import { ScheduleTicker } from '../schedules/ticker.js';
import { VersionCommands } from '../versions/commands.js';
import { VersionOverrides } from '../versions/overrides.js';
import { WorkflowRegistry } from '../workflows/registry.js';
import { openDataKeys } from '../privacy/boot.js';
import type { DataKeys } from '../privacy/dataKeys.js';
import type { Kernel } from './kernel.js';
import { checkProject, forkedModel, forkedWorkflow, type LoadedProject } from './project.js';
import type { Stops } from './stops.js';

export interface Definitions {
  readonly models: ModelRegistry;
  readonly workflows: WorkflowRegistry;
  readonly versions: VersionCommands;
}

export interface Identity {
  readonly keys: SigningKeys;
  readonly commands: IamCommands;
  readonly auth: AuthService;
  readonly authenticator: Authenticator;
  /** Per-subject data keys of personal data (docs/privacy.md). */
  readonly dataKeys: DataKeys;
}

export interface Features extends Definitions, Identity {
  readonly artifacts: ArtifactCatalog;
  readonly outbound: Outbound;
  readonly federationProviders: FederationProviders;
  readonly federation: FederationService;
  readonly records: RecordCommands;
  readonly executor: RunExecutor;
  /** Starts runs for every transport: one gate, one cached input validator per workflow version. */
  readonly starter: RunStarter;
  readonly approvals: ApprovalService;
  /** Erasing users and records (POST /admin/erasure), and the list SVC_ERASURE_LOG keeps of them. */
  readonly erasers: Erasers;
  readonly erasureLog: ErasureLog;
  /** Expires ended runs past their retention (every worker sweeps; docs/privacy.md). */
  readonly retention: RetentionSweeper;
  /** Pausing, running now and backfilling schedules (the ticker fires their ticks on its own). */
  readonly schedules: ScheduleCommands;
}

/** How often each worker sweeps for expired runs: retention is counted in minutes at the least. */
const RETENTION_SWEEP_MS = 30_000;

/** What building a feature reads; each adds to `stops` what must stop on close. */
interface Context {
  readonly kernel: Kernel;
  readonly project: LoadedProject;
  readonly clock: Clock;
  readonly stops: Stops;
}

export async function startFeatures(kernel: Kernel, project: LoadedProject, clock: Clock, stops: Stops): Promise<Features> {
  const context: Context = { kernel, project, clock, stops };
  const { pool, store, settings } = kernel;
  const { definitions, overrides } = await startDefinitions(context);
  const artifacts = new ArtifactCatalog(pool, project.artifacts, store, clock);
  checkProject(project, overrides, await artifacts.uploadedVersions(), kernel.logger);
  const identity = await startIdentity(context);
  const checkpointer = new Checkpointer(store, identity.keys, clock, kernel.logger);
  if (settings.auditCheckpointSeconds > 0) checkpointer.start(settings.auditCheckpointSeconds * 1000);
  stops.add(() => checkpointer.stop());
  // Every request svc sends out (APICall, MCP, LLMs, federation) goes through this one guard.
  const outbound = createOutbound(settings.outbound, { logger: kernel.logger });
  stops.add(() => outbound.close());
  const federationProviders = new FederationProviders(project.federationProviders, settings, liveOf(kernel));
  await federationProviders.start();
  stops.add(() => federationProviders.stop());
  const federation = new FederationService(pool, identity.commands, identity.auth, federationProviders, settings, outbound.fetch);
  const records = new RecordCommands(store, identity.dataKeys);
  const runs = await startRuns(context, { ...definitions, artifacts, records, outbound, dataKeys: identity.dataKeys });
  const schedules = startSchedules(context, definitions.workflows, runs);
  const privacy = await startPrivacy(context, definitions, identity, records);
  return { ...definitions, ...identity, artifacts, outbound, federationProviders, federation, records, ...runs, schedules, ...privacy };
}

/** Erasure (and its replay from SVC_ERASURE_LOG at start) and the retention sweeper of this worker. */
async function startPrivacy(
  { kernel, clock, stops }: Context,
  definitions: Definitions,
  identity: Identity,
  records: RecordCommands,
): Promise<Pick<Features, 'erasers' | 'erasureLog' | 'retention'>> {
  const { pool, store, settings, logger } = kernel;
  const erasers: Erasers = {
    // The user's own values, then the personal data of every run the user started (spec.personal_data).
    user: async (id, metadata) => {
      await identity.commands.eraseUser(id, metadata);
      await identity.dataKeys.eraseOwned('run', id);
    },
    record: (id, metadata) => records.erase(allModelVersions(definitions.models), id, clock.now().toISOString(), metadata),
  };
  const erasureLog = new ErasureLog(settings.erasureLogFile);
  await erasureLog.replay(pool, erasers, logger);
  const retention = new RetentionSweeper({
    pool,
    store,
    workflows: definitions.workflows,
    clock,
    logger,
    defaultRetentionMs: settings.runRetentionMs,
    dataKeys: identity.dataKeys,
  });
  retention.start(RETENTION_SWEEP_MS);
  stops.add(() => retention.stop());
  return { erasers, erasureLog, retention };
}

/** Whether a model or workflow declares personal data of its own (users' email and phone always are). */
function declaresPersonalData(project: LoadedProject): boolean {
  return project.models.some((model) => personalFieldsOf(model).length > 0) || project.workflows.some((w) => (w.personalData ?? []).length > 0);
}

/** Every version of every model this process knows (a record may be of any). */
function allModelVersions(models: ModelRegistry): ModelDefinition[] {
  return models.names().flatMap((name) => models.versions(name));
}

/** What a live view of the log needs (a view every worker keeps current). */
function liveOf(kernel: Kernel) {
  return { store: kernel.store, follower: kernel.follower, wakeUps: kernel.wakeUps, logger: kernel.logger };
}

/** The model and workflow versions: files, forks and runtime toggles, current on every worker. */
async function startDefinitions({ kernel, project, clock, stops }: Context): Promise<{ definitions: Definitions; overrides: VersionOverrides }> {
  const overrides = new VersionOverrides(liveOf(kernel));
  const models = new ModelRegistry(project.models, overrides);
  const workflows = new WorkflowRegistry(project.workflows, overrides);
  models.followForks(overrides, (document) => {
    const parsed = forkedModel(document);
    if (!parsed.model) kernel.logger.warn({ problems: parsed.problems }, 'a forked model version could not be registered');
    return parsed.model;
  });
  workflows.followForks(overrides, forkedWorkflow);
  await overrides.start();
  stops.add(() => overrides.stop());
  const versions = new VersionCommands(kernel.store, clock, kernel.settings.projectDir);
  return { definitions: { models, workflows, versions }, overrides };
}

/** Signing keys, tokens, sessions, sign-in and the Authenticator every protected route asks. */
async function startIdentity({ kernel, project, clock, stops }: Context): Promise<Identity> {
  const { settings, logger, pool, store } = kernel;
  const keys = await loadSigningKeys(settings.signingKeyHex);
  if (keys.isEphemeral) logger.warn('SVC_SIGNING_KEY is not set: using an ephemeral signing key; tokens die on restart');
  const tokens = new TokenService(keys, settings.tokenTtlSeconds, clock);
  const sessions = new SessionView({ ...liveOf(kernel), clock });
  await sessions.start();
  stops.add(() => sessions.stop());
  const dataKeys = await openDataKeys(pool, settings, declaresPersonalData(project), logger);
  const commands = new IamCommands(store, clock, dataKeys);
  await sealLegacyUsers(pool, commands, clock, logger);
  const throttle = settings.loginThrottle ? createLoginThrottle(pool) : NO_LOGIN_THROTTLE;
  const auth = new AuthService(pool, commands, tokens, settings.tenantIds, clock, throttle);
  const authenticator = createAuthenticator({ tokens, sessions, settings });
  limitPasswordHashing(settings.passwordHashConcurrency);
  void warmUpPasswordHashing();
  return { keys, commands, auth, authenticator, dataKeys };
}

/** The run executor (it starts driving runs nobody drives) and the approvals that pause runs. */
async function startRuns(
  { kernel, project, clock, stops }: Context,
  uses: Omit<Definitions, 'versions'> & { artifacts: ArtifactCatalog; records: RecordCommands; outbound: Outbound; dataKeys: DataKeys },
): Promise<{ executor: RunExecutor; starter: RunStarter; approvals: ApprovalService }> {
  const { settings, logger, pool, store } = kernel;
  const { models, workflows, artifacts, records, outbound } = uses;
  const executor = new RunExecutor({
    store,
    follower: kernel.follower,
    workflows,
    steps: { pool, runners: project.runners, models, records, artifacts, projectDir: settings.projectDir, fetch: outbound.fetch },
    agents: { models: new Map(project.agentModels.map((m) => [m.name, m])), artifacts, fetch: outbound.fetch },
    clock,
    logger,
    leaseMs: settings.runLeaseMs,
    dataKeys: uses.dataKeys,
    claimIntervalMs: settings.runClaimIntervalMs,
  });
  await executor.start();
  stops.add(() => executor.stop());
  const idempotency = new IdempotencyKeys({ pool, store, clock, logger, ttlSeconds: settings.idempotencyTtlSeconds });
  idempotency.startSweeping();
  stops.add(() => idempotency.stopSweeping());
  const starter = new RunStarter({ models, executor, syncTimeoutMs: settings.syncTimeoutMs, idempotency });
  const approvals = new ApprovalService(pool, store, executor, clock);
  const expiry = new ApprovalExpiry({ pool, store, executor, logger, clock, intervalMs: settings.runClaimIntervalMs });
  expiry.start();
  stops.add(() => expiry.stop());
  return { executor, starter, approvals };
}

/** The schedule ticker of this worker (its tick leases last as long as run leases), and the schedules' admin commands. */
function startSchedules(
  { kernel, clock, stops }: Context,
  workflows: WorkflowRegistry,
  { executor, starter }: { executor: RunExecutor; starter: RunStarter },
): ScheduleCommands {
  const { settings, logger, pool, store } = kernel;
  const firer = new TickFirer({ pool, starter, clock, owner: executor.owner, leaseMs: settings.runLeaseMs });
  const ticker = new ScheduleTicker({ store, workflows, firer, clock, logger, intervalMs: settings.scheduleClaimIntervalMs });
  ticker.start();
  stops.add(() => ticker.stop());
  return new ScheduleCommands({ store, workflows, starter, firer, clock });
}
