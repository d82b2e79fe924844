// spec.concurrency: how many runs of a workflow (per key value) execute at once, and what a start
// beyond that does. Its typed shape, its V-codes (V037 limit, V038 on_limit, V039 key) and the key of a run.
import type { JsonObject } from '../kernel/json.js';
import { render, templatePaths } from './template.js';

/** findings.ts's Add, for errors (not imported: findings.ts depends on definition.ts, which reads this). */
type Add = (code: string, severity: 'error', message: string) => void;

export const ON_LIMITS = ['queue', 'reject'] as const;
export type OnLimit = (typeof ON_LIMITS)[number];
const CONCURRENCY_KEYS = new Set(['limit', 'key', 'on_limit']);
/** A limit above this is no limit worth a queue; it is refused as a likely typo. */
export const MAX_CONCURRENCY_LIMIT = 10_000;

export interface ConcurrencyDefinition {
  limit: number;
  /** A template over `input` (null: one limit for every run of the workflow). */
  key: string | null;
  onLimit: OnLimit;
}

/** Reads spec.concurrency leniently (null when absent or without a usable limit); `validateConcurrency` reports what is wrong. */
export function toConcurrency(value: unknown): ConcurrencyDefinition | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  if (!isLimit(raw.limit)) return null;
  return { limit: raw.limit, key: typeof raw.key === 'string' ? raw.key : null, onLimit: raw.on_limit === 'reject' ? 'reject' : 'queue' };
}

const isLimit = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_CONCURRENCY_LIMIT;

/** V037 a bad `limit` (or a concurrency that is not a mapping, or an unknown key), V038 a bad `on_limit`, V039 a bad `key`. */
export function validateConcurrency(value: unknown, add: Add): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return add('V037', 'error', 'spec.concurrency must be a mapping with a limit');
  const raw = value as Record<string, unknown>;
  Object.keys(raw)
    .filter((key) => !CONCURRENCY_KEYS.has(key))
    .forEach((key) => add('V001', 'error', `unknown key spec.concurrency.${key}`));
  if (!isLimit(raw.limit)) add('V037', 'error', `spec.concurrency.limit must be an integer in 1..${MAX_CONCURRENCY_LIMIT}`);
  if (raw.on_limit !== undefined && !ON_LIMITS.includes(raw.on_limit as OnLimit)) {
    add('V038', 'error', `spec.concurrency.on_limit must be one of ${ON_LIMITS.join(', ')}`);
  }
  if (raw.key !== undefined) {
    const problem = keyProblem(raw.key);
    if (problem) add('V039', 'error', `spec.concurrency.key ${problem}`);
  }
}

function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.trim() === '') return 'must be a non-empty template such as "{{ input.customer_id }}"';
  const paths = templatePaths(key);
  if (paths.length === 0) return 'has no {{ template }}: every run would share one key (leave key out for that)';
  const outside = paths.find((path) => path !== 'input' && !path.startsWith('input.'));
  if (outside !== undefined) return `reads ${outside}: a key may read only the run's input (input.<field>)`;
  if ((key.match(/\{\{/g) ?? []).length !== paths.length) return 'has a {{ that does not close';
  return null;
}

/** The run's key under the policy: the key template rendered over `{input}` ('' without a key). */
export function concurrencyKeyOf(policy: ConcurrencyDefinition, input: JsonObject): string {
  if (policy.key === null) return '';
  const rendered = render(policy.key, { input });
  return typeof rendered === 'string' ? rendered : JSON.stringify(rendered);
}
