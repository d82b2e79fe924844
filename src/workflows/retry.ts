// Step retry policies: the `retry` key (and APICall's `http.retries` shorthand) read into one shape,
// and the backoff between attempts. Pure: the engine journals what it computes here.
import { asRecord, type StepDefinition } from './definition.js';
import { parseDuration } from './durations.js';

/** Step kinds that touch the outside world and may declare `retry`. */
export const RETRY_KINDS: readonly string[] = ['Functional', 'APICall', 'MCP', 'Agent', 'ModelOp'];
export const RETRY_KEYS = ['max_attempts', 'initial_interval', 'backoff', 'multiplier', 'max_interval', 'jitter', 'non_retryable'];
export const MAX_ATTEMPTS = 100;
/** A destination the outbound policy refuses is refused on every attempt: never worth another. */
const NEVER_RETRIED = ['OutboundRefusedError'];

export interface RetryPolicy {
  /** Total attempts, the first included. */
  maxAttempts: number;
  initialIntervalMs: number;
  backoff: 'exponential' | 'fixed';
  multiplier: number;
  maxIntervalMs: number;
  /** Full jitter: each interval is drawn in [0, interval]. */
  jitter: boolean;
  nonRetryable: string[];
}

const DEFAULTS: RetryPolicy = {
  maxAttempts: 1,
  initialIntervalMs: 1000,
  backoff: 'exponential',
  multiplier: 2,
  maxIntervalMs: 100_000,
  jitter: false,
  nonRetryable: [],
};

/** What `http.retries: n` always meant (up to 5 more tries after 100 ms, 200 ms, ... at most 2 s; a 4xx is final), as a policy. */
export function apiRetriesPolicy(retries: number): RetryPolicy {
  const n = Math.min(5, Math.max(0, Math.floor(retries)));
  return { ...DEFAULTS, maxAttempts: n + 1, initialIntervalMs: 100, maxIntervalMs: 2000, nonRetryable: ['HttpClientError'] };
}

/**
 * The step's retry policy, read leniently (validation reports what is wrong): `retry`, else an
 * APICall's `http.retries`; null when the step makes one attempt.
 */
export function retryPolicyOf(step: StepDefinition): RetryPolicy | null {
  if (!RETRY_KINDS.includes(step.kind)) return null;
  if (step.config.retry === undefined) {
    const retries = Number(asRecord(step.config.http).retries ?? 0);
    return step.kind === 'APICall' && retries >= 1 ? apiRetriesPolicy(retries) : null;
  }
  const raw = asRecord(step.config.retry);
  const initialIntervalMs = parseDuration(raw.initial_interval) ?? DEFAULTS.initialIntervalMs;
  const policy: RetryPolicy = {
    maxAttempts: Number.isInteger(raw.max_attempts) ? Math.min(MAX_ATTEMPTS, Math.max(1, raw.max_attempts as number)) : DEFAULTS.maxAttempts,
    initialIntervalMs,
    backoff: raw.backoff === 'fixed' ? 'fixed' : 'exponential',
    multiplier: typeof raw.multiplier === 'number' && raw.multiplier >= 1 ? raw.multiplier : DEFAULTS.multiplier,
    maxIntervalMs: parseDuration(raw.max_interval) ?? Math.max(initialIntervalMs, 100 * initialIntervalMs),
    jitter: raw.jitter === true,
    nonRetryable: Array.isArray(raw.non_retryable) ? raw.non_retryable.map(String) : [],
  };
  return policy.maxAttempts > 1 ? policy : null;
}

/** Whether a failed attempt (1-based) with this error name is followed by another. */
export function isRetried(policy: RetryPolicy, attempt: number, errorName: string): boolean {
  return attempt < policy.maxAttempts && !policy.nonRetryable.includes(errorName) && !NEVER_RETRIED.includes(errorName);
}

/**
 * Milliseconds between failed attempt `attempt` (1-based) and the next: the initial interval, times
 * the multiplier per earlier failure when exponential, capped at max_interval; with jitter a draw
 * of `random()` (in [0, 1)) scales it.
 */
export function retryIntervalMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const growth = policy.backoff === 'exponential' ? policy.multiplier ** Math.max(0, attempt - 1) : 1;
  const interval = Math.min(policy.maxIntervalMs, policy.initialIntervalMs * growth);
  return Math.round(policy.jitter ? random() * interval : interval);
}
