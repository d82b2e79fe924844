// spec.retention: how long a workflow's ended runs are kept (docs/privacy.md). Its shape and its V-code (V046).
import { parseDuration } from './durations.js';

/** findings.ts's Add, for errors (not imported: findings.ts depends on definition.ts, which reads this). */
type Add = (code: string, severity: 'error', message: string) => void;

const RETENTION_KEYS = new Set(['runs']);
/** Shorter than a minute is a typo, not a policy. */
const MIN_RETENTION_MS = 60_000;

/** spec.retention.runs in milliseconds, or null (absent or unusable: SVC_RUN_RETENTION applies). */
export function toRunRetention(value: unknown): number | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const ms = parseDuration((value as Record<string, unknown>).runs);
  return ms !== null && ms >= MIN_RETENTION_MS ? ms : null;
}

/** V046: spec.retention must be a mapping whose `runs` is a duration of at least a minute (90d, 12h). */
export function validateRetention(value: unknown, add: Add): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return add('V046', 'error', 'spec.retention must be a mapping such as {runs: 90d}');
  const raw = value as Record<string, unknown>;
  Object.keys(raw)
    .filter((key) => !RETENTION_KEYS.has(key))
    .forEach((key) => add('V001', 'error', `unknown key spec.retention.${key}`));
  if (toRunRetention(raw) === null) add('V046', 'error', 'spec.retention.runs must be a duration of at least 1m (such as 90d or 12h)');
}
