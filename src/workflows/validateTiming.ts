// The checks of durable time in workflows: `retry` (V024 where the kind cannot take it, V026 bad
// fields), durations (V023), and Wait steps (V025 duration or until, V027 a literal until that is no date).
import { asRecord, type StepDefinition } from './definition.js';
import { parseDateTime, parseDuration } from './durations.js';
import type { Add } from './findings.js';
import { MAX_ATTEMPTS, RETRY_KEYS, RETRY_KINDS } from './retry.js';

export function validateTiming(step: StepDefinition, add: Add): void {
  if (step.config.retry !== undefined) {
    if (!RETRY_KINDS.includes(step.kind))
      add('V024', 'error', `retry is for steps that call out (${RETRY_KINDS.join(', ')}), not a ${step.kind} step`, step.id);
    else validateRetry(step, add);
  }
  if (step.kind === 'Wait') validateWait(step, add);
}

function validateRetry(step: StepDefinition, add: Add): void {
  const raw = step.config.retry;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    add('V026', 'error', 'retry must be a mapping (max_attempts, initial_interval, ...)', step.id);
    return;
  }
  const retry = asRecord(raw);
  const bad = (message: string) => add('V026', 'error', `retry.${message}`, step.id);
  Object.keys(retry)
    .filter((key) => !RETRY_KEYS.includes(key))
    .forEach((key) => bad(`${key} is not a retry key (${RETRY_KEYS.join(', ')})`));
  const { max_attempts: maxAttempts, backoff, multiplier, jitter, non_retryable: nonRetryable } = retry;
  if (maxAttempts !== undefined && !(Number.isInteger(maxAttempts) && (maxAttempts as number) >= 1 && (maxAttempts as number) <= MAX_ATTEMPTS))
    bad(`max_attempts must be an integer from 1 to ${MAX_ATTEMPTS}`);
  if (backoff !== undefined && backoff !== 'exponential' && backoff !== 'fixed') bad('backoff must be exponential or fixed');
  if (multiplier !== undefined && !(typeof multiplier === 'number' && Number.isFinite(multiplier) && multiplier >= 1)) bad('multiplier must be a number >= 1');
  if (jitter !== undefined && typeof jitter !== 'boolean') bad('jitter must be true or false');
  if (nonRetryable !== undefined && !(Array.isArray(nonRetryable) && nonRetryable.every((n) => typeof n === 'string' && n.length > 0)))
    bad('non_retryable must be a list of error names');
  const intervals = ['initial_interval', 'max_interval'].map((key) => {
    if (retry[key] === undefined) return undefined;
    const ms = parseDuration(retry[key]);
    if (ms === null) add('V023', 'error', `retry.${key} ${JSON.stringify(retry[key])} is not a duration (a number with ms, s, m, h or d)`, step.id);
    return ms;
  });
  const [initial, max] = intervals;
  if (typeof initial === 'number' && typeof max === 'number' && max < initial) bad('max_interval is shorter than initial_interval');
  if (step.kind === 'APICall' && asRecord(step.config.http).retries !== undefined)
    add('V026', 'error', 'retry and http.retries are both given: http.retries is shorthand for retry, keep one', step.id);
}

function validateWait(step: StepDefinition, add: Add): void {
  const { duration, until } = step.config;
  if ((duration === undefined) === (until === undefined)) {
    add('V025', 'error', 'a Wait step needs exactly one of duration and until', step.id);
    return;
  }
  if (duration !== undefined && parseDuration(duration) === null)
    add('V023', 'error', `duration ${JSON.stringify(duration)} is not a duration (a number with ms, s, m, h or d)`, step.id);
  if (until !== undefined && (typeof until !== 'string' || (!until.includes('{{') && parseDateTime(until) === null)))
    add('V027', 'error', `until ${JSON.stringify(until)} must be an ISO 8601 date-time with an offset, or a {{ template }} naming one`, step.id);
}
