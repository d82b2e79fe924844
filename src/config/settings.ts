// Settings as the service reads them: the environment over svc.yaml, parsed by the schema, every problem listed at once, frozen.
import path from 'node:path';
import type { OutboundPolicy } from '../outbound/policy.js';
import { DEPLOYMENT_ENVS, LOG_LEVELS, problemOf, settingsSchema, type SettingValues } from './schema.js';
import { readSystemConfig } from './systemConfig.js';
import type { TrustProxy } from './settingTypes.js';
import { deepFreeze } from '../kernel/json.js';
import type { TracingSettings } from '../tracing/settings.js';

export type DeploymentEnv = (typeof DEPLOYMENT_ENVS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface DevSettings {
  readonly enabled: boolean;
  readonly allowDevAuth: boolean;
  readonly apiKey: string | undefined;
  readonly autoLogin: boolean;
  readonly ipAllowlist: readonly string[];
}

export interface OAuthSettings {
  readonly baseUrl: string | undefined;
  readonly uiRedirectUrl: string | undefined;
  /** `SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET`, keyed by lower-cased provider name. */
  readonly clientCredentials: Readonly<Record<string, { clientId?: string; clientSecret?: string }>>;
}

export interface Settings {
  readonly host: string;
  readonly port: number;
  readonly databaseUrl: string | undefined;
  /** SVC_READ_DATABASE_URL: a streaming replica that serves reads; undefined: every read goes to the primary. */
  readonly readDatabaseUrl: string | undefined;
  /** How long a read waits for the replica to replay the client's last write before it reads the primary. */
  readonly readReplicaWaitMs: number;
  readonly embeddedPgPort: number;
  readonly projectDir: string;
  readonly env: DeploymentEnv;
  readonly signingKeyHex: string | undefined;
  /** SVC_DATA_KEY: wraps the per-subject keys of personal data (docs/privacy.md); unset: a key kept in the database, with a warning. */
  readonly dataKeyHex: string | undefined;
  /** SVC_ERASURE_LOG: a file outside the database where each erasure is listed and replayed from at start. */
  readonly erasureLogFile: string | undefined;
  /** SVC_DATA_KEY_PREVIOUS: during a rotation, the key the data keys may still be wrapped with. */
  readonly previousDataKeyHex: string | undefined;
  readonly tokenTtlSeconds: number;
  readonly dev: DevSettings;
  readonly exposeModelCrud: boolean;
  readonly oauth: OAuthSettings;
  readonly redisUrl: string | undefined;
  readonly syncTimeoutMs: number;
  /** How long an Idempotency-Key of a trigger answers with its first run. */
  readonly idempotencyTtlSeconds: number;
  readonly tenantIds: readonly string[] | undefined;
  readonly workers: number;
  /** SVC_METRICS_PORT: a port (on HOST) serving GET /metrics without a token; null: none. */
  readonly metricsPort: number | null;
  /** bcrypt hashes one process runs at once (each takes a core for ~100-250 ms). */
  readonly passwordHashConcurrency: number;
  /** Run event streams one process opens at once (look-up and catch-up read); more wait their turn in order. */
  readonly streamOpenConcurrency: number;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  readonly dbPoolSize: number;
  /** How long opening a database connection, or waiting for a free one, may take before the request is a 503. */
  readonly dbConnectTimeoutMs: number;
  /** How long a run's lease lasts without a heartbeat; a crashed worker's runs resume after it. */
  readonly runLeaseMs: number;
  /** How often a worker looks for runs nobody drives. */
  readonly runClaimIntervalMs: number;
  /** How often each worker looks for due schedule ticks. */
  readonly scheduleClaimIntervalMs: number;
  /** Where outbound requests may go: enforced in production, with SVC_OUTBOUND_ALLOW's exceptions. */
  readonly outbound: OutboundPolicy;
  /** How long the snapshot horizon may stand still, while later transactions start, before /health says degraded. */
  readonly horizonStallSeconds: number;
  /** How often the service checks whether to sign an audit checkpoint; 0: only on demand. */
  readonly auditCheckpointSeconds: number;
  /** SVC_RUN_RETENTION in milliseconds: how long ended runs are kept where a workflow sets no spec.retention (null: forever). */
  readonly runRetentionMs: number | null;
  /** Whether failed sign-ins slow down and then answer 429 (off for rigs and deployments that throttle at a proxy). */
  readonly loginThrottle: boolean;
  /** Which peers' X-Forwarded-For names the client (Express's `trust proxy`); false: the peer is the client. */
  readonly trustProxy: TrustProxy;
  /** OpenTelemetry traces: off unless an OTLP endpoint is set (docs/operations.md, Traces). */
  readonly tracing: TracingSettings;
  /** The environment as read at start, for `${VAR}` references in config documents (LLMs, federation). */
  readonly environment: Readonly<Record<string, string>>;
  /** Warnings to log once a logger exists (deprecated names and the like). */
  readonly warnings: readonly string[];
}

export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

type Source = Readonly<Record<string, string | undefined>>;

/** Older names still read, each for the setting that replaced it, with a warning. */
const RENAMED_SETTINGS: Readonly<Record<string, string>> = { SVC_BISCUIT_PRIVATE_KEY: 'SVC_SIGNING_KEY' };

/**
 * Reads settings from the environment and `<projectDir>/svc.yaml` (environment wins).
 * Throws one SettingsError naming every invalid setting.
 */
export function loadSettings(env: Source = process.env, cwd: string = process.cwd()): Settings {
  const environment = definedOnly(env);
  // The project folder says where svc.yaml is, so it cannot come from svc.yaml.
  const projectDir = path.resolve(cwd, env.SVC_PROJECT_DIR ?? '.');
  const file = readSystemConfig(projectDir);
  const warnings: string[] = [];
  const source = withRenamedSettings({ ...file.settings, ...environment }, warnings);
  if (source.SVC_REDIS_URL !== undefined) {
    warnings.push('SVC_REDIS_URL is accepted but not used: revocations, session ends and wake-ups travel through the PostgreSQL log to every worker');
  }
  const parsed = settingsSchema.safeParse(source);
  const problems = [...file.problems, ...(parsed.error?.issues.map(problemOf) ?? [])];
  if (!parsed.success || problems.length > 0) throw new SettingsError(problems);
  return deepFreeze(toSettings(parsed.data, { projectDir, environment, warnings, clientCredentials: readOAuthCredentials(source) }));
}

function withRenamedSettings(source: Record<string, string>, warnings: string[]): Record<string, string> {
  const renamed = { ...source };
  for (const [older, current] of Object.entries(RENAMED_SETTINGS)) {
    if (source[older] === undefined || source[current] !== undefined) continue;
    warnings.push(`${older} is deprecated: rename it to ${current}`);
    renamed[current] = source[older];
  }
  return renamed;
}

/** What the service reads besides the schema's values. */
interface Context {
  projectDir: string;
  environment: Readonly<Record<string, string>>;
  warnings: readonly string[];
  clientCredentials: OAuthSettings['clientCredentials'];
}

/** The schema's values, by environment name, in the shape the service reads. */
function toSettings(values: SettingValues, context: Context): Settings {
  const env = values.SVC_ENV;
  return {
    host: values.HOST,
    port: values.PORT,
    databaseUrl: values.DATABASE_URL,
    readDatabaseUrl: values.SVC_READ_DATABASE_URL,
    readReplicaWaitMs: values.SVC_READ_REPLICA_WAIT_MS,
    embeddedPgPort: values.SVC_EMBEDDED_PG_PORT,
    projectDir: context.projectDir,
    env,
    signingKeyHex: values.SVC_SIGNING_KEY?.toLowerCase(),
    dataKeyHex: values.SVC_DATA_KEY?.toLowerCase(),
    previousDataKeyHex: values.SVC_DATA_KEY_PREVIOUS?.toLowerCase(),
    erasureLogFile: values.SVC_ERASURE_LOG === undefined ? undefined : path.resolve(context.projectDir, values.SVC_ERASURE_LOG),
    tokenTtlSeconds: values.SVC_TOKEN_TTL_SECONDS,
    dev: {
      enabled: values.SVC_DEV_MODE,
      allowDevAuth: values.SVC_ALLOW_DEV_AUTH,
      apiKey: values.SVC_DEV_API_KEY,
      autoLogin: values.SVC_DEV_AUTO_LOGIN,
      ipAllowlist: values.SVC_DEV_IP_ALLOWLIST,
    },
    exposeModelCrud: values.SVC_EXPOSE_MODEL_CRUD,
    oauth: { baseUrl: values.SVC_OAUTH_BASE_URL, uiRedirectUrl: values.SVC_OAUTH_UI_REDIRECT_URL, clientCredentials: context.clientCredentials },
    redisUrl: values.SVC_REDIS_URL,
    syncTimeoutMs: values.SVC_SYNC_TIMEOUT_MS,
    idempotencyTtlSeconds: values.SVC_IDEMPOTENCY_TTL_SECONDS,
    tenantIds: values.SVC_TENANT_IDS,
    workers: values.SVC_WORKERS,
    metricsPort: values.SVC_METRICS_PORT === 0 ? null : values.SVC_METRICS_PORT,
    passwordHashConcurrency: values.SVC_PASSWORD_HASH_CONCURRENCY,
    streamOpenConcurrency: values.SVC_STREAM_OPEN_CONCURRENCY,
    logLevel: values.SVC_LOG_LEVEL,
    bodyLimitBytes: values.SVC_BODY_LIMIT_BYTES,
    dbPoolSize: values.SVC_DB_POOL_SIZE,
    dbConnectTimeoutMs: values.SVC_DB_CONNECT_TIMEOUT_MS,
    runLeaseMs: values.SVC_RUN_LEASE_MS,
    runClaimIntervalMs: values.SVC_RUN_CLAIM_INTERVAL_MS,
    scheduleClaimIntervalMs: values.SVC_SCHEDULE_CLAIM_INTERVAL_MS,
    outbound: { enforced: env === 'production', allow: values.SVC_OUTBOUND_ALLOW },
    horizonStallSeconds: values.SVC_HORIZON_STALL_SECONDS,
    auditCheckpointSeconds: values.SVC_AUDIT_CHECKPOINT_SECONDS,
    runRetentionMs: retentionMs(values.SVC_RUN_RETENTION),
    loginThrottle: values.SVC_LOGIN_THROTTLE,
    trustProxy: values.SVC_TRUST_PROXY,
    tracing: tracingSettings(values),
    environment: context.environment,
    warnings: context.warnings,
  };
}

const RETENTION_UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

function retentionMs(value: string | undefined): number | null {
  return value === undefined ? null : Number(value.slice(0, -1)) * RETENTION_UNIT_MS[value.slice(-1)]!;
}

/**
 * The traces endpoint as OpenTelemetry resolves it: the signal's own URL as given, else the base
 * endpoint with `/v1/traces` appended; the signal's headers over the base ones.
 */
function tracingSettings(values: SettingValues): TracingSettings {
  const base = values.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = values.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? null : `${base.replace(/\/+$/, '')}/v1/traces`);
  return {
    tracesUrl: values.OTEL_SDK_DISABLED ? null : tracesUrl,
    headers: { ...values.OTEL_EXPORTER_OTLP_HEADERS, ...values.OTEL_EXPORTER_OTLP_TRACES_HEADERS },
    serviceName: values.OTEL_SERVICE_NAME,
    scheduleDelayMs: values.OTEL_BSP_SCHEDULE_DELAY,
  };
}

/** `SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET`: names made of a provider's, so outside the schema. */
function readOAuthCredentials(source: Source): Record<string, { clientId?: string; clientSecret?: string }> {
  const result: Record<string, { clientId?: string; clientSecret?: string }> = {};
  for (const [name, value] of Object.entries(source)) {
    const match = /^SVC_OAUTH_([A-Z0-9_]+?)_CLIENT_(ID|SECRET)$/.exec(name);
    if (!match || value === undefined || value === '') continue;
    const provider = match[1]!.toLowerCase();
    const entry = (result[provider] ??= {});
    if (match[2] === 'ID') entry.clientId = value;
    else entry.clientSecret = value;
  }
  return result;
}

function definedOnly(env: Source): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}
