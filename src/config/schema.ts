// Every setting svc reads, in one zod schema: its name, its kind, its default and its range, and the
// rules between settings. Each may come from the environment or from svc.yaml's spec.settings.
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { parseOutboundAllowList } from '../outbound/policy.js';
import { flag, integer, list, listOr, matching, oneOf, optionalText, otlpHeaders, textOr, trustProxy, url } from './settingTypes.js';

export const DEPLOYMENT_ENVS = ['development', 'test', 'production'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const outboundAllowList = list().transform((items, context) => {
  const parsed = parseOutboundAllowList(items ?? []);
  if (parsed.invalid.length > 0) {
    const message = `entries must be a host, host:port, [IPv6]:port or a CIDR range; cannot read: ${parsed.invalid.join(', ')}`;
    context.addIssue({ code: 'custom', message, continue: true });
  }
  return parsed.allow;
});

/** The settings by name, in the order their problems are listed. */
export const settingFields = z.object({
  PORT: integer(8000, 0, 65535),
  HOST: textOr('127.0.0.1'),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  // A streaming replica of DATABASE_URL's server: run, record and audit reads go there (docs/scaling.md).
  SVC_READ_DATABASE_URL: url(['postgres:', 'postgresql:']),
  // How long a read waits for the replica to replay a client's last write before it reads the primary.
  SVC_READ_REPLICA_WAIT_MS: integer(500, 0, 60_000),
  SVC_EMBEDDED_PG_PORT: integer(54329, 1, 65535),
  SVC_ENV: oneOf(DEPLOYMENT_ENVS, 'development'),
  SVC_SIGNING_KEY: matching(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (a 32-byte Ed25519 private key)', { emptyIsUnset: false }),
  SVC_DATA_KEY: matching(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (a 32-byte AES-256 key that wraps the personal data keys)', { emptyIsUnset: false }),
  SVC_DATA_KEY_PREVIOUS: matching(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters (the SVC_DATA_KEY being rotated away from)', { emptyIsUnset: true }),
  SVC_TOKEN_TTL_SECONDS: integer(86400, 0, 10 * 365 * 86400),
  SVC_DEV_MODE: flag(false),
  SVC_ALLOW_DEV_AUTH: flag(false),
  SVC_DEV_API_KEY: matching(/^[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}$/, 'must look like XXXX-XXXX-XXXX-XXXX (uppercase letters and digits)', {
    emptyIsUnset: true,
  }),
  SVC_DEV_AUTO_LOGIN: flag(false),
  SVC_DEV_IP_ALLOWLIST: listOr(['127.0.0.1', '::1']),
  SVC_EXPOSE_MODEL_CRUD: flag(true),
  SVC_OAUTH_BASE_URL: url(['http:', 'https:']),
  SVC_OAUTH_UI_REDIRECT_URL: url(['http:', 'https:']),
  SVC_REDIS_URL: url(['redis:', 'rediss:']),
  SVC_SYNC_TIMEOUT_MS: integer(30000, 0, 3_600_000),
  SVC_IDEMPOTENCY_TTL_SECONDS: integer(86400, 1, 30 * 86400),
  SVC_TENANT_IDS: list(),
  SVC_WORKERS: integer(1, 1, 64),
  // One core fewer than the machine has (at least one): a burst of logins never takes every core
  // from the requests that need none.
  SVC_PASSWORD_HASH_CONCURRENCY: integer(Math.max(1, availableParallelism() - 1), 1, 64),
  // A few at a time leave the pool to the other requests while thousands of clients reconnect at
  // once (bench/RESULTS.md, session 24).
  SVC_STREAM_OPEN_CONCURRENCY: integer(4, 1, 1000),
  SVC_LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
  SVC_BODY_LIMIT_BYTES: integer(1024 * 1024, 1024, 64 * 1024 * 1024),
  SVC_DB_POOL_SIZE: integer(10, 1, 200),
  SVC_DB_CONNECT_TIMEOUT_MS: integer(10_000, 100, 600_000),
  SVC_RUN_LEASE_MS: integer(30_000, 500, 3_600_000),
  SVC_RUN_CLAIM_INTERVAL_MS: integer(1000, 50, 600_000),
  SVC_SCHEDULE_CLAIM_INTERVAL_MS: integer(1000, 50, 600_000),
  SVC_OUTBOUND_ALLOW: outboundAllowList,
  SVC_HORIZON_STALL_SECONDS: integer(10, 1, 86_400),
  SVC_AUDIT_CHECKPOINT_SECONDS: integer(30, 0, 60),
  SVC_LOGIN_THROTTLE: flag(true),
  SVC_TRUST_PROXY: trustProxy(),
  SVC_ERASURE_LOG: optionalText(),
  SVC_RUN_RETENTION: matching(/^[1-9][0-9]*(m|h|d)$/, 'must be a whole number of minutes, hours or days, such as 90d (unset: runs are kept forever)', {
    emptyIsUnset: true,
  }),
  SVC_METRICS_PORT: integer(0, 0, 65535),
  // OpenTelemetry's own names (its SDK specification): tracing is on once an endpoint is set.
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:']),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url(['http:', 'https:']),
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeaders(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: otlpHeaders(),
  OTEL_SERVICE_NAME: textOr('svc'),
  OTEL_BSP_SCHEDULE_DELAY: integer(5000, 0, 3_600_000),
  OTEL_SDK_DISABLED: flag(false),
});

export type SettingValues = z.output<typeof settingFields>;

/** Every name of the schema: what svc.yaml's spec.settings may hold. */
export const SETTING_NAMES: readonly string[] = Object.keys(settingFields.shape);

/** The settings and the rules between them; a value that broke a rule of its own still takes part. */
export const settingsSchema = settingFields.superRefine((values, context) => {
  for (const message of combinationProblems(values)) context.addIssue({ code: 'custom', message, continue: true });
});

function combinationProblems(values: SettingValues): string[] {
  const problems: string[] = [];
  const isProduction = values.SVC_ENV === 'production';
  if (values.SVC_DEV_MODE) {
    if (isProduction) problems.push('SVC_DEV_MODE=true is refused when SVC_ENV=production');
    if (!values.SVC_ALLOW_DEV_AUTH) problems.push('SVC_DEV_MODE=true also needs SVC_ALLOW_DEV_AUTH=true');
    if (values.SVC_DEV_API_KEY === undefined) problems.push('SVC_DEV_MODE=true also needs SVC_DEV_API_KEY');
  }
  if (values.SVC_READ_DATABASE_URL !== undefined && values.DATABASE_URL === undefined) {
    problems.push('SVC_READ_DATABASE_URL needs DATABASE_URL (a replica of the embedded server is not supported)');
  }
  if (isProduction && values.SVC_SIGNING_KEY === undefined) problems.push('SVC_SIGNING_KEY is required when SVC_ENV=production');
  return problems;
}

/** One line per zod issue: the setting's name and what is wrong with it, or a rule between settings. */
export function problemOf(issue: z.core.$ZodIssue): string {
  return issue.path.length > 0 ? `${issue.path.map(String).join('.')} ${issue.message}` : issue.message;
}
