// The only reader of process.env and svc.yaml: parse every setting, list every problem at once, freeze.
import { availableParallelism } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseOutboundAllowList, type OutboundPolicy } from '../outbound/policy.js';

export type DeploymentEnv = 'development' | 'test' | 'production';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

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
  readonly embeddedPgPort: number;
  readonly projectDir: string;
  readonly env: DeploymentEnv;
  readonly signingKeyHex: string | undefined;
  readonly tokenTtlSeconds: number;
  readonly dev: DevSettings;
  readonly exposeModelCrud: boolean;
  readonly oauth: OAuthSettings;
  readonly redisUrl: string | undefined;
  readonly syncTimeoutMs: number;
  readonly tenantIds: readonly string[] | undefined;
  readonly workers: number;
  /** bcrypt hashes one process runs at once (each takes a core for ~100-250 ms). */
  readonly passwordHashConcurrency: number;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  readonly dbPoolSize: number;
  /** How long opening a database connection, or waiting for a free one, may take before the request is a 503. */
  readonly dbConnectTimeoutMs: number;
  /** How long a run's lease lasts without a heartbeat; a crashed worker's runs resume after it. */
  readonly runLeaseMs: number;
  /** How often a worker looks for runs nobody drives. */
  readonly runClaimIntervalMs: number;
  /** Where outbound requests may go: enforced in production, with SVC_OUTBOUND_ALLOW's exceptions. */
  readonly outbound: OutboundPolicy;
  /** How long the snapshot horizon may stand still, while later transactions start, before /health says degraded. */
  readonly horizonStallSeconds: number;
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

/** Names a user may put under `spec.settings` of svc.yaml; the environment still wins. */
const FILE_SETTING_NAMES = [
  'PORT', 'HOST', 'DATABASE_URL', 'SVC_EMBEDDED_PG_PORT', 'SVC_PASSWORD_HASH_CONCURRENCY', 'SVC_ENV', 'SVC_SIGNING_KEY', 'SVC_TOKEN_TTL_SECONDS',
  'SVC_DEV_MODE', 'SVC_ALLOW_DEV_AUTH', 'SVC_DEV_API_KEY', 'SVC_DEV_AUTO_LOGIN', 'SVC_DEV_IP_ALLOWLIST',
  'SVC_EXPOSE_MODEL_CRUD', 'SVC_OAUTH_BASE_URL', 'SVC_OAUTH_UI_REDIRECT_URL', 'SVC_REDIS_URL',
  'SVC_SYNC_TIMEOUT_MS', 'SVC_TENANT_IDS', 'SVC_WORKERS', 'SVC_LOG_LEVEL', 'SVC_BODY_LIMIT_BYTES', 'SVC_DB_POOL_SIZE',
  'SVC_DB_CONNECT_TIMEOUT_MS', 'SVC_RUN_LEASE_MS', 'SVC_RUN_CLAIM_INTERVAL_MS', 'SVC_OUTBOUND_ALLOW', 'SVC_HORIZON_STALL_SECONDS',
] as const;

const DEV_KEY_PATTERN = /^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Source = Readonly<Record<string, string | undefined>>;

/**
 * Reads settings from the environment and `<projectDir>/svc.yaml` (environment wins).
 * Throws one SettingsError naming every invalid setting.
 */
export function loadSettings(env: Source = process.env, cwd: string = process.cwd()): Settings {
  const problems: string[] = [];
  const warnings: string[] = [];
  const projectDir = path.resolve(cwd, env.SVC_PROJECT_DIR ?? '.');
  const file = readSystemConfig(projectDir, problems);
  const source: Source = { ...file.settings, ...definedOnly(env) };
  const read = new SettingReader(source, problems);

  const signingKey = source.SVC_SIGNING_KEY ?? source.SVC_BISCUIT_PRIVATE_KEY;
  if (source.SVC_SIGNING_KEY === undefined && source.SVC_BISCUIT_PRIVATE_KEY !== undefined) {
    warnings.push('SVC_BISCUIT_PRIVATE_KEY is deprecated: rename it to SVC_SIGNING_KEY');
  }
  if (source.SVC_REDIS_URL !== undefined) {
    warnings.push('SVC_REDIS_URL is accepted but not used: revocations, session ends and wake-ups travel through the PostgreSQL log to every worker');
  }
  if (signingKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(signingKey)) {
    problems.push('SVC_SIGNING_KEY must be 64 hex characters (a 32-byte Ed25519 private key)');
  }

  const envNames = ['development', 'test', 'production'] as const;
  const fileEnv = envNames.find((name) => name === file.deploymentMode);
  if (file.deploymentMode !== undefined && fileEnv === undefined) {
    problems.push(`svc.yaml spec.deployment_mode must be one of ${envNames.join(', ')}`);
  }
  const envName = read.oneOf('SVC_ENV', envNames, fileEnv ?? 'development');
  const dev: DevSettings = {
    enabled: read.boolean('SVC_DEV_MODE', false),
    allowDevAuth: read.boolean('SVC_ALLOW_DEV_AUTH', false),
    apiKey: read.string('SVC_DEV_API_KEY'),
    autoLogin: read.boolean('SVC_DEV_AUTO_LOGIN', false),
    ipAllowlist: read.list('SVC_DEV_IP_ALLOWLIST') ?? ['127.0.0.1', '::1'],
  };
  if (dev.apiKey !== undefined && !DEV_KEY_PATTERN.test(dev.apiKey)) {
    problems.push('SVC_DEV_API_KEY must look like XXXX-XXXX-XXXX-XXXX (uppercase letters and digits)');
  }
  if (dev.enabled && envName === 'production') problems.push('SVC_DEV_MODE=true is refused when SVC_ENV=production');
  if (dev.enabled && !dev.allowDevAuth) problems.push('SVC_DEV_MODE=true also needs SVC_ALLOW_DEV_AUTH=true');
  if (dev.enabled && dev.apiKey === undefined) problems.push('SVC_DEV_MODE=true also needs SVC_DEV_API_KEY');
  if (envName === 'production' && signingKey === undefined) {
    problems.push('SVC_SIGNING_KEY is required when SVC_ENV=production');
  }
  const outboundAllow = parseOutboundAllowList(read.list('SVC_OUTBOUND_ALLOW') ?? []);
  if (outboundAllow.invalid.length > 0) {
    problems.push(`SVC_OUTBOUND_ALLOW entries must be a host, host:port, [IPv6]:port or a CIDR range; cannot read: ${outboundAllow.invalid.join(', ')}`);
  }

  const settings: Settings = {
    host: read.string('HOST') ?? '127.0.0.1',
    port: read.integer('PORT', 8000, 0, 65535),
    databaseUrl: read.url('DATABASE_URL', ['postgres:', 'postgresql:']),
    embeddedPgPort: read.integer('SVC_EMBEDDED_PG_PORT', 54329, 1, 65535),
    projectDir,
    env: envName,
    signingKeyHex: signingKey?.toLowerCase(),
    tokenTtlSeconds: read.integer('SVC_TOKEN_TTL_SECONDS', 86400, 0, 10 * 365 * 86400),
    dev,
    exposeModelCrud: read.boolean('SVC_EXPOSE_MODEL_CRUD', file.exposeModelCrud ?? true),
    oauth: {
      baseUrl: read.url('SVC_OAUTH_BASE_URL', ['http:', 'https:']),
      uiRedirectUrl: read.url('SVC_OAUTH_UI_REDIRECT_URL', ['http:', 'https:']),
      clientCredentials: readOAuthCredentials(source),
    },
    redisUrl: read.url('SVC_REDIS_URL', ['redis:', 'rediss:']),
    syncTimeoutMs: read.integer('SVC_SYNC_TIMEOUT_MS', 30000, 0, 3_600_000),
    tenantIds: read.list('SVC_TENANT_IDS'),
    workers: read.integer('SVC_WORKERS', 1, 1, 64),
    // One core fewer than the machine has (at least one): a burst of logins never takes every core
    // from the requests that need none.
    passwordHashConcurrency: read.integer('SVC_PASSWORD_HASH_CONCURRENCY', Math.max(1, availableParallelism() - 1), 1, 64),
    logLevel: read.oneOf('SVC_LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: read.integer('SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    dbPoolSize: read.integer('SVC_DB_POOL_SIZE', 10, 1, 200),
    dbConnectTimeoutMs: read.integer('SVC_DB_CONNECT_TIMEOUT_MS', 10_000, 100, 600_000),
    runLeaseMs: read.integer('SVC_RUN_LEASE_MS', 30_000, 500, 3_600_000),
    runClaimIntervalMs: read.integer('SVC_RUN_CLAIM_INTERVAL_MS', 1000, 50, 600_000),
    outbound: { enforced: envName === 'production', allow: outboundAllow.allow },
    horizonStallSeconds: read.integer('SVC_HORIZON_STALL_SECONDS', 10, 1, 86_400),
    environment: definedOnly(env),
    warnings,
  };
  if (problems.length > 0) throw new SettingsError(problems);
  return deepFreeze(settings);
}

interface SystemConfigFile {
  settings: Record<string, string>;
  exposeModelCrud?: boolean;
  deploymentMode?: string;
}

function readSystemConfig(projectDir: string, problems: string[]): SystemConfigFile {
  const file = path.join(projectDir, 'svc.yaml');
  if (!existsSync(file)) return { settings: {} };
  let spec: Record<string, unknown>;
  try {
    const docs = parseAllDocuments(readFileSync(file, 'utf8'));
    // parseAllDocuments never throws: a syntax error would otherwise leave a half-read file.
    const syntaxError = docs.flatMap((d) => d.errors)[0];
    if (syntaxError) throw syntaxError;
    const doc = docs.map((d) => d.toJS() as unknown).find((d) => isRecord(d) && d.kind === 'SystemConfig');
    if (!isRecord(doc)) return { settings: {} };
    spec = isRecord(doc.spec) ? doc.spec : {};
  } catch (error) {
    problems.push(`svc.yaml cannot be read: ${(error as Error).message}`);
    return { settings: {} };
  }
  const result: SystemConfigFile = { settings: {} };
  const api = spec.api;
  if (isRecord(api) && api.expose_model_crud !== undefined) {
    if (typeof api.expose_model_crud === 'boolean') result.exposeModelCrud = api.expose_model_crud;
    else problems.push('svc.yaml spec.api.expose_model_crud must be true or false');
  }
  if (spec.deployment_mode !== undefined) result.deploymentMode = String(spec.deployment_mode);
  if (spec.settings !== undefined) {
    if (!isRecord(spec.settings)) problems.push('svc.yaml spec.settings must be a mapping');
    else {
      for (const [name, value] of Object.entries(spec.settings)) {
        if (!(FILE_SETTING_NAMES as readonly string[]).includes(name)) problems.push(`svc.yaml spec.settings.${name} is not a known setting`);
        else if (value !== null && value !== undefined) result.settings[name] = String(value);
      }
    }
  }
  return result;
}

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

/** Typed accessors that record a problem instead of throwing, so every problem is reported together. */
class SettingReader {
  constructor(
    private readonly source: Source,
    private readonly problems: string[],
  ) {}

  string(name: string): string | undefined {
    const value = this.source[name];
    return value === undefined || value === '' ? undefined : value;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  boolean(name: string, fallback: boolean): boolean {
    const raw = this.string(name)?.toLowerCase();
    if (raw === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    this.problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = this.string(name);
    if (raw === undefined) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  }

  list(name: string): string[] | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    return raw.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  }

  url(name: string, protocols: readonly string[]): string | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    try {
      const url = new URL(raw);
      if (protocols.includes(url.protocol)) return raw;
    } catch {
      // reported below
    }
    this.problems.push(`${name} must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`);
    return undefined;
  }
}

function definedOnly(env: Source): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/**
 * Resolves `${VAR}` and `${VAR:default}` in a config document's strings. Answers the names that were
 * unset (without a default), so the caller can skip the document.
 */
export function interpolateEnvironment<T>(
  value: T,
  environment: Readonly<Record<string, string>>,
): { value: T; missing: string[]; referenced: string[] } {
  const missing: string[] = [];
  const referenced: string[] = [];
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') {
      return item.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
        referenced.push(name);
        const found = environment[name];
        if (found !== undefined && found !== '') return found;
        if (fallback !== undefined) return fallback;
        missing.push(name);
        return '';
      });
    }
    if (Array.isArray(item)) return item.map(walk);
    if (isRecord(item)) return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    return item;
  };
  return { value: walk(value) as T, missing, referenced };
}
