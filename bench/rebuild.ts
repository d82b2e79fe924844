// Benchmark 3: rebuilding a per-stream summary projection from a 1,000,000-event log, against a bare keyset read.
import { defineProjection, ProjectionRegistry, rebuildProjection, type RebuildResult } from '../src/projections/index.js';
import type { JsonObject, JsonValue } from '../src/kernel/json.js';
import type { Pool } from '../src/db/pool.js';
import { createBenchDatabase, describeMachine, fmtInt, fmtRatio, markdownTable, median, type Benchmark } from './support.js';

const STREAMS = Number(process.env.BENCH_REBUILD_STREAMS ?? 100_000);
const EVENTS_PER_STREAM = 10;
const TOTAL = STREAMS * EVENTS_PER_STREAM;
/** Streams per fill transaction: the log is written by many transactions, interleaving streams. */
const FILL_BLOCK = 10_000;
/** The page size rebuildProjection reads with (PAGE_SIZE in src/projections/rebuild.ts). */
const PAGE = 5000;
const ROUNDS = 2;
const TARGET_EVENTS_PER_SECOND = 100_000;

interface RunSummaryRow extends JsonObject {
  run_id: string;
  workflow: string;
  status: string;
  steps_completed: number;
  event_count: number;
  started_at: string | null;
  last_event_at: string;
  last_output: JsonValue;
  input: JsonValue;
}

const runSummary = defineProjection<RunSummaryRow>({
  name: 'bench-run-summary',
  version: 1,
  table: 'bench_run_summary',
  key: ['run_id'],
  eventTypes: ['RunStarted', 'StepCompleted', 'RunCompleted', 'RunFailed'],
  keysOf: (event) => [{ run_id: event.streamId }],
  evolve(row, key, event) {
    const data = event.data;
    const base: RunSummaryRow = row ?? {
      run_id: String(key.run_id),
      workflow: '',
      status: 'unknown',
      steps_completed: 0,
      event_count: 0,
      started_at: null,
      last_event_at: event.recordedAt,
      last_output: null,
      input: null,
    };
    const next: RunSummaryRow = { ...base, event_count: base.event_count + 1, last_event_at: event.recordedAt };
    switch (event.type) {
      case 'RunStarted':
        return { ...next, workflow: String(data.workflow), status: 'running', started_at: event.recordedAt, input: data.input ?? null };
      case 'StepCompleted':
        return { ...next, steps_completed: base.steps_completed + 1, last_output: data.output ?? null };
      case 'RunCompleted':
        return { ...next, status: 'completed', last_output: data.output ?? null };
      case 'RunFailed':
        return { ...next, status: 'failed', last_output: { error: data.error ?? null } };
      default:
        return base;
    }
  },
});

const CREATE_TABLE = `CREATE TABLE bench_run_summary (
  run_id text PRIMARY KEY,
  workflow text NOT NULL,
  status text NOT NULL,
  steps_completed integer NOT NULL,
  event_count integer NOT NULL,
  started_at timestamptz,
  last_event_at timestamptz NOT NULL,
  last_output jsonb,
  input jsonb
)`;

/**
 * Writes position `position` of streams [from, from + count) in one set-based statement: a run
 * starts, eight steps complete, and it completes (or, one run in ten, fails).
 */
const FILL_SQL = `
INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at)
SELECT 'run-' || md5(n::text)::uuid, 'run', $1::int,
  CASE WHEN $1 = 1 THEN 'RunStarted' WHEN $1 < ${EVENTS_PER_STREAM} THEN 'StepCompleted'
       WHEN n % 10 = 0 THEN 'RunFailed' ELSE 'RunCompleted' END,
  CASE WHEN $1 = 1 THEN jsonb_build_object('runId', 'run-' || md5(n::text)::uuid, 'workflow', 'wf-' || (n % 50),
         'input', jsonb_build_object('customer', 'customer-' || (n % 977), 'amount', n % 10000, 'values', jsonb_build_array(1, 2, 3, 4, 5)))
       WHEN $1 < ${EVENTS_PER_STREAM} THEN jsonb_build_object('step', 'step-' || $1, 'durationMs', (n * $1) % 900,
         'output', jsonb_build_object('ok', true, 'value', n * $1, 'note', 'step ' || $1 || ' of run ' || n))
       WHEN n % 10 = 0 THEN jsonb_build_object('error', jsonb_build_object('code', 'TIMEOUT', 'message', 'step timed out'))
       ELSE jsonb_build_object('output', jsonb_build_object('approved', n % 2 = 0, 'total', n % 10000)) END,
  jsonb_build_object('actor', 'user-' || (n % 100), 'tenant', 'acme', 'requestId', md5((n * 31 + $1)::text)),
  now() + make_interval(secs => $1)
FROM generate_series($2::int, $2::int + $3::int - 1) AS n`;

async function fillLog(pool: Pool): Promise<void> {
  for (let position = 1; position <= EVENTS_PER_STREAM; position++) {
    for (let from = 0; from < STREAMS; from += FILL_BLOCK) {
      await pool.query(FILL_SQL, [position, from, Math.min(FILL_BLOCK, STREAMS - from)]);
    }
  }
  // Settle the table as an aged log would be: hint bits set, statistics fresh.
  await pool.query('VACUUM ANALYZE events');
  await pool.query('CHECKPOINT');
}

/** The reference: every event, in pages of the rebuild's size, keyset on global_position. */
async function bareKeysetRead(pool: Pool): Promise<{ events: number; ms: number }> {
  const started = performance.now();
  let after = 0;
  let events = 0;
  for (;;) {
    const { rows } = await pool.query<{ global_position: number }>(
      `SELECT global_position, stream_id, stream_type, stream_position, type, data, metadata,
              transaction_id::text AS transaction_id, recorded_at
       FROM events WHERE global_position > $1 ORDER BY global_position LIMIT $2`,
      [after, PAGE],
    );
    events += rows.length;
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.global_position;
  }
  return { events, ms: performance.now() - started };
}

interface RebuildRound {
  result: RebuildResult;
  /** When the last page had been read and folded, before the rows were written and swapped in. */
  replayMs: number;
}

async function timedRebuild(pool: Pool, registry: ProjectionRegistry): Promise<RebuildRound> {
  const started = performance.now();
  let replayMs = 0;
  const result = await rebuildProjection(pool, registry, runSummary, {
    onProgress: ({ applied }) => {
      if (applied >= TOTAL && replayMs === 0) replayMs = performance.now() - started;
    },
  });
  if (!result) throw new Error('rebuildProjection skipped the rebuild');
  return { result, replayMs };
}

export const rebuildBenchmark: Benchmark = {
  name: 'rebuild',
  description: `rebuildProjection of a per-stream summary over ${fmtInt(TOTAL)} events in ${fmtInt(STREAMS)} streams, vs a bare keyset read`,
  async run() {
    const db = await createBenchDatabase('rebuild', 10);
    try {
      await db.pool.query(CREATE_TABLE);
      const fillStarted = performance.now();
      await fillLog(db.pool);
      const fillMs = performance.now() - fillStarted;
      console.error(`  filled ${fmtInt(TOTAL)} events in ${(fillMs / 1000).toFixed(1)} s`);
      const registry = new ProjectionRegistry();
      registry.register(runSummary);

      const bare: { events: number; ms: number }[] = [];
      const rebuilds: RebuildRound[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const steps = [async () => bare.push(await bareKeysetRead(db.pool)), async () => rebuilds.push(await timedRebuild(db.pool, registry))];
        for (const step of r % 2 === 0 ? steps : steps.reverse()) await step();
        console.error(
          `  round ${r + 1}: bare ${fmtInt((bare.at(-1)!.events * 1000) / bare.at(-1)!.ms)} events/s, ` +
            `rebuild ${fmtInt((rebuilds.at(-1)!.result.events * 1000) / rebuilds.at(-1)!.result.durationMs)} events/s`,
        );
      }
      await checkRows(db.pool);
      return { title: 'rebuild', markdown: await report(rebuilds, bare, fillMs) };
    } finally {
      await db.drop();
    }
  },
};

/** The rebuilt table must hold what the fill wrote, or the timing means nothing. */
async function checkRows(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ n: number; steps: number; events: number; failed: number }>(
    `SELECT count(*)::int AS n, sum(steps_completed)::int AS steps, sum(event_count)::int AS events,
            count(*) FILTER (WHERE status = 'failed')::int AS failed FROM bench_run_summary`,
  );
  const got = rows[0]!;
  const expected = { n: STREAMS, steps: STREAMS * (EVENTS_PER_STREAM - 2), events: TOTAL, failed: STREAMS / 10 };
  if (JSON.stringify(got) !== JSON.stringify(expected)) {
    throw new Error(`rebuilt table is wrong: ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  }
}

async function report(rebuilds: RebuildRound[], bare: { events: number; ms: number }[], fillMs: number): Promise<string> {
  const rebuildRates = rebuilds.map((r) => (r.result.events * 1000) / r.result.durationMs);
  const replayRates = rebuilds.map((r) => (TOTAL * 1000) / r.replayMs);
  const bareRates = bare.map((b) => (b.events * 1000) / b.ms);
  const rate = median(rebuildRates);
  const list = (xs: number[]) => xs.map(fmtInt).join(', ');
  const seconds = (ms: number) => (ms / 1000).toFixed(2);
  return [
    `## 3. Projection rebuild (\`npm run bench -- rebuild\`)`,
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `${fmtInt(TOTAL)} events in ${fmtInt(STREAMS)} \`run-<uuid>\` streams (${EVENTS_PER_STREAM} each: RunStarted, 8 StepCompleted, ` +
      `RunCompleted or RunFailed; data 100-200 bytes of jsonb, metadata with actor/tenant/request id), written set-based ` +
      `by ${(TOTAL / FILL_BLOCK).toLocaleString('en-US')} transactions of ${fmtInt(FILL_BLOCK)} rows (${seconds(fillMs)} s including VACUUM ANALYZE). ` +
      'The projection (`bench_run_summary`, one row per run: workflow, status, counts, started/last event time, last output ' +
      'jsonb, input jsonb) is defined in the bench. The rebuild is timed end to end: count, shadow table, replay inside one REPEATABLE READ ' +
      `snapshot in global_position pages of ${fmtInt(PAGE)}, fold, writing ${fmtInt(STREAMS)} rows, catch-up and swap. ${ROUNDS} alternating rounds; medians, all rounds in brackets.`,
    '',
    markdownTable(
      ['job', 'events/s', `seconds for ${fmtInt(TOTAL)} events`],
      [
        ['`rebuildProjection` (end to end)', `**${fmtInt(rate)}** (${list(rebuildRates)})`, seconds(median(rebuilds.map((r) => r.result.durationMs)))],
        [
          '↳ of which the replay (read + fold), until the last page was folded',
          `${fmtInt(median(replayRates))} (${list(replayRates)})`,
          seconds(median(rebuilds.map((r) => r.replayMs))),
        ],
        [
          `reference: bare keyset read (\`global_position > $1 ORDER BY global_position LIMIT ${PAGE}\`, same columns, same pool)`,
          `**${fmtInt(median(bareRates))}** (${list(bareRates)})`,
          seconds(median(bare.map((b) => b.ms))),
        ],
      ],
    ),
    '',
    `**${fmtInt(rate)} events/s** (target >= ${fmtInt(TARGET_EVENTS_PER_SECOND)}: ${rate >= TARGET_EVENTS_PER_SECOND ? 'met' : 'missed'}); ` +
      `ratio rebuild / bare read: **${fmtRatio(rate / median(bareRates))}**. The rebuilt table was checked ` +
      `(${fmtInt(STREAMS)} rows, step and event counts, failed runs).`,
  ].join('\n');
}
