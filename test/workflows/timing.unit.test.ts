// Durations and retry backoff (pure): parsing, the interval growth and its cap, full jitter, and
// which failures are retried. Properties are checked over seeded random draws.
import { expect } from 'chai';
import { toWorkflowDefinition, type StepDefinition } from '../../src/workflows/definition.js';
import { workflowSummary } from '../../src/workflows/manifest.js';
import { MAX_DURATION_MS, parseDateTime, parseDuration } from '../../src/workflows/durations.js';
import { isRetried, retryIntervalMs, retryPolicyOf, type RetryPolicy } from '../../src/workflows/retry.js';
import { seededRandom } from '../projections/sampleProjection.js';

const step = (kind: string, config: Record<string, unknown>): StepDefinition => ({ id: 's', kind: kind as StepDefinition['kind'], routes: {}, config });
const policy = (overrides: Partial<RetryPolicy>): RetryPolicy => ({
  maxAttempts: 5,
  initialIntervalMs: 1000,
  backoff: 'exponential',
  multiplier: 2,
  maxIntervalMs: 60_000,
  jitter: false,
  nonRetryable: [],
  ...overrides,
});

describe('durations', () => {
  it('reads each unit', () => {
    expect(parseDuration('250ms')).to.equal(250);
    expect(parseDuration('10s')).to.equal(10_000);
    expect(parseDuration('1.5s')).to.equal(1500);
    expect(parseDuration('5m')).to.equal(300_000);
    expect(parseDuration('2h')).to.equal(7_200_000);
    expect(parseDuration('1d')).to.equal(86_400_000);
    expect(parseDuration('0s')).to.equal(0);
  });

  it('refuses what is not one duration with one unit', () => {
    for (const bad of ['', '10', 10, '-1s', '1w', '1 minute', '1s2ms', 's', '1e3s', null, undefined, '3651d', ['1s']]) {
      expect(parseDuration(bad), JSON.stringify(bad)).to.equal(null);
    }
  });

  it('round-trips any amount in any unit (property)', () => {
    const random = seededRandom(17);
    const units: [string, number][] = [
      ['ms', 1],
      ['s', 1000],
      ['m', 60_000],
      ['h', 3_600_000],
      ['d', 86_400_000],
    ];
    for (let i = 0; i < 2000; i++) {
      const [unit, factor] = units[Math.floor(random() * units.length)]!;
      const amount = Math.floor(random() * 10_000);
      const expected = amount * factor;
      expect(parseDuration(`${amount}${unit}`), `${amount}${unit}`).to.equal(expected <= MAX_DURATION_MS ? expected : null);
    }
  });

  it('reads ISO 8601 date-times with an offset only', () => {
    expect(parseDateTime('2030-01-01T09:00:00Z')).to.equal(Date.UTC(2030, 0, 1, 9));
    expect(parseDateTime('2030-01-01T11:00:00.500+02:00')).to.equal(Date.UTC(2030, 0, 1, 9, 0, 0, 500));
    for (const bad of ['2030-01-01T09:00:00', '2030-01-01', 'tomorrow', '2030-13-45T99:00:00Z', 1893488400000, null]) {
      expect(parseDateTime(bad), JSON.stringify(bad)).to.equal(null);
    }
  });
});

describe('retry backoff', () => {
  it('grows by the multiplier per failed attempt, up to max_interval', () => {
    const exponential = policy({ initialIntervalMs: 100, multiplier: 3, maxIntervalMs: 2000 });
    expect([1, 2, 3, 4, 5].map((n) => retryIntervalMs(exponential, n))).to.deep.equal([100, 300, 900, 2000, 2000]);
    const fixed = policy({ backoff: 'fixed', initialIntervalMs: 700 });
    expect([1, 2, 3].map((n) => retryIntervalMs(fixed, n))).to.deep.equal([700, 700, 700]);
  });

  it('never shrinks without jitter, never passes the cap, and with full jitter draws within [0, interval] (property)', () => {
    const random = seededRandom(42);
    for (let i = 0; i < 500; i++) {
      const initial = Math.floor(random() * 5000);
      const p = policy({ initialIntervalMs: initial, multiplier: 1 + random() * 4, maxIntervalMs: initial + Math.floor(random() * 100_000) });
      let previous = 0;
      for (let attempt = 1; attempt <= 12; attempt++) {
        const interval = retryIntervalMs(p, attempt);
        expect(interval).to.be.at.least(previous).and.at.most(p.maxIntervalMs);
        const jittered = retryIntervalMs({ ...p, jitter: true }, attempt, random);
        expect(jittered).to.be.at.least(0).and.at.most(interval);
        previous = interval;
      }
    }
  });

  it('retries until max_attempts, never a non-retryable error nor a refused destination', () => {
    const p = policy({ maxAttempts: 3, nonRetryable: ['ValidationError'] });
    expect([1, 2, 3].map((n) => isRetried(p, n, 'Error'))).to.deep.equal([true, true, false]);
    expect(isRetried(p, 1, 'ValidationError')).to.equal(false);
    expect(isRetried(p, 1, 'OutboundRefusedError')).to.equal(false);
  });

  it('reads retry on the kinds that take it, and http.retries as its shorthand', () => {
    expect(retryPolicyOf(step('Functional', {}))).to.equal(null);
    expect(retryPolicyOf(step('Router', { retry: { max_attempts: 3 } }))).to.equal(null);
    expect(retryPolicyOf(step('Functional', { retry: { max_attempts: 1 } }))).to.equal(null);
    expect(retryPolicyOf(step('Functional', { retry: { max_attempts: 4, initial_interval: '2s', jitter: true, non_retryable: ['X'] } }))).to.deep.equal({
      maxAttempts: 4,
      initialIntervalMs: 2000,
      backoff: 'exponential',
      multiplier: 2,
      maxIntervalMs: 200_000,
      jitter: true,
      nonRetryable: ['X'],
    });
    const shorthand = retryPolicyOf(step('APICall', { http: { url: 'http://x', retries: 2 } }))!;
    expect(shorthand).to.include({ maxAttempts: 3, initialIntervalMs: 100, maxIntervalMs: 2000, jitter: false });
    expect(shorthand.nonRetryable).to.deep.equal(['HttpClientError']);
    expect([1, 2].map((n) => retryIntervalMs(shorthand, n))).to.deep.equal([100, 200]);
  });
});

describe('the manifest of a workflow with a Wait step', () => {
  it('does not count Wait as a slow kind', () => {
    const steps = [
      { id: 'nap', kind: 'Wait', duration: '1s' },
      { id: 'done', kind: 'Response', mapping: {} },
    ];
    const workflow = toWorkflowDefinition({ kind: 'Workflow', name: 'w', version: 'v1', file: 'w.yaml', body: { spec: { steps } } });
    expect(workflowSummary(workflow)).to.include({ has_slow_steps: false });
    expect(workflowSummary(workflow).slow_kinds_present).to.deep.equal([]);
  });
});
