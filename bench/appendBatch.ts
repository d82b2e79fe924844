// Benchmark 2: appends of 100 events per call to new streams, 10 in flight, against a bare multi-row INSERT.
import { randomUUID } from 'node:crypto';
import { EventStore, NO_STREAM, type NewEvent } from '../src/eventstore/index.js';
import { ProjectionRegistry } from '../src/projections/index.js';
import { startCpuMeter, type CpuSpent } from './cpu.js';
import {
  createBenchDatabase,
  describeMachine,
  fmtInt,
  fmtMs,
  fmtRatio,
  markdownTable,
  median,
  runClosedLoop,
  SAMPLE_METADATA,
  sampleRunStarted,
  summarize,
  type Benchmark,
  type Summary,
} from './support.js';

const BATCH = 100;
const CALLS = Number(process.env.BENCH_BATCH_CALLS ?? 1_000);
const WARM_UP = 50;
const CONCURRENCY = 10;
const ROUNDS = 3;
const TARGET_EVENTS_PER_SECOND = 30_000;

interface Round {
  kind: 'bare' | 'store';
  eventsPerSecond: number;
  latency: Summary;
  cpu: CpuSpent;
}

function batchOf(call: number): NewEvent[] {
  return Array.from({ length: BATCH }, (_, j) => ({
    type: j === 0 ? 'RunStarted' : 'StepCompleted',
    data: j === 0 ? sampleRunStarted(call) : { step: `step-${j}`, output: { ok: true, value: j * 7, note: 'done' } },
  }));
}

/** `($1, $2, 1, $3, $4, $5), ($6, ...)`: one multi-row VALUES insert of the whole batch. */
function bareBatchInsert(streamId: string, events: NewEvent[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = events.map((e, j) => {
    values.push(streamId, 'run', j + 1, e.type, e.data, SAMPLE_METADATA);
    const p = j * 6;
    return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}, $${p + 6})`;
  });
  return {
    text: `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata) VALUES ${tuples.join(', ')}`,
    values,
  };
}

export const appendBatchBenchmark: Benchmark = {
  name: 'append-batch',
  description: `${CALLS} appends of ${BATCH} events to new streams, ${CONCURRENCY} in flight, vs a bare multi-row INSERT`,
  async run() {
    const db = await createBenchDatabase('append_batch', CONCURRENCY);
    try {
      const store = new EventStore({ pool: db.pool, projector: new ProjectionRegistry() });
      const batches = Array.from({ length: CALLS }, (_, i) => batchOf(i));

      const viaStore = async (n: number): Promise<Round> => {
        const ids = Array.from({ length: n }, () => `run-${randomUUID()}`);
        const meter = await startCpuMeter(db.pool, db.applicationName);
        const { elapsedMs, latencies } = await runClosedLoop(n, CONCURRENCY, (i) =>
          store.append({ streamId: ids[i]!, expectedVersion: NO_STREAM, events: batches[i % CALLS]! }, { metadata: SAMPLE_METADATA }),
        );
        return { kind: 'store', eventsPerSecond: (n * BATCH * 1000) / elapsedMs, latency: summarize(latencies), cpu: await meter.stop() };
      };
      const viaBareInsert = async (n: number): Promise<Round> => {
        const ids = Array.from({ length: n }, () => `run-${randomUUID()}`);
        const meter = await startCpuMeter(db.pool, db.applicationName);
        const { elapsedMs, latencies } = await runClosedLoop(n, CONCURRENCY, (i) => {
          const { text, values } = bareBatchInsert(ids[i]!, batches[i % CALLS]!);
          return db.pool.query(text, values);
        });
        return { kind: 'bare', eventsPerSecond: (n * BATCH * 1000) / elapsedMs, latency: summarize(latencies), cpu: await meter.stop() };
      };

      await viaBareInsert(WARM_UP);
      await viaStore(WARM_UP);
      const rounds: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? [viaBareInsert, viaStore] : [viaStore, viaBareInsert];
        for (const run of order) {
          await db.pool.query('CHECKPOINT');
          const round = await run(CALLS);
          rounds.push(round);
          console.error(`  round ${r + 1} ${round.kind}: ${fmtInt(round.eventsPerSecond)} events/s`);
        }
      }
      return { title: 'append-batch', markdown: await report(rounds) };
    } finally {
      await db.drop();
    }
  },
};

async function report(rounds: Round[]): Promise<string> {
  const of = (kind: Round['kind']) => rounds.filter((r) => r.kind === kind);
  const row = (label: string, list: Round[]) => [
    label,
    `**${fmtInt(median(list.map((r) => r.eventsPerSecond)))}** (${list.map((r) => fmtInt(r.eventsPerSecond)).join(', ')})`,
    fmtMs(median(list.map((r) => r.latency.p50))),
    fmtMs(median(list.map((r) => r.latency.p99))),
    cpuCell(list, (c) => c.clientMs),
    cpuCell(list, (c) => c.databaseMs),
  ];
  const store = median(of('store').map((r) => r.eventsPerSecond));
  const bare = median(of('bare').map((r) => r.eventsPerSecond));
  return [
    `## 2. Batched appends, ${BATCH} events per call (\`npm run bench -- append-batch\`)`,
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `${ROUNDS} alternating rounds of ${fmtInt(CALLS)} calls (${fmtInt(CALLS * BATCH)} events) each, after ${WARM_UP} warm-up calls of each; ` +
      `${CONCURRENCY} calls in flight on one ${CONCURRENCY}-connection pool; each call writes ${BATCH} events to a new stream. ` +
      'p50/p99 are per call (100 events).',
    '',
    markdownTable(
      ['job', 'events/s', 'p50 ms / call', 'p99 ms / call', 'CPU ms / 1,000 events: client', 'database'],
      [
        row(`\`EventStore.append\` of ${BATCH} events, \`NO_STREAM\`, no projection`, of('store')),
        row(`reference: bare multi-row \`INSERT ... VALUES\` of the same ${BATCH} rows, same pool`, of('bare')),
      ],
    ),
    '',
    `**${fmtInt(store)} events/s** (target >= ${fmtInt(TARGET_EVENTS_PER_SECOND)}: ${store >= TARGET_EVENTS_PER_SECOND ? 'met' : 'missed'}); ` +
      `ratio store / bare INSERT: **${fmtRatio(store / bare)}**; ` +
      `CPU per event (client + database), bare / store: **${cpuRatio(of('bare'), of('store'))}** (the throughput ratio's load-independent twin: ` +
      'on a machine shared with other work, events/s moves with it, CPU per event barely does).',
  ].join('\n');
}

/** CPU ms per 1,000 events, median over the rounds; "n/a" when the database's processes are not visible. */
function cpuPerThousand(list: Round[], pick: (cpu: CpuSpent) => number | null): number | null {
  const values = list.map((r) => pick(r.cpu));
  if (values.some((v) => v === null)) return null;
  return median(values.map((v) => (v! * 1000) / (CALLS * BATCH)));
}

function cpuCell(list: Round[], pick: (cpu: CpuSpent) => number | null): string {
  const value = cpuPerThousand(list, pick);
  return value === null ? 'n/a' : value.toFixed(1);
}

function cpuRatio(bare: Round[], store: Round[]): string {
  const total = (list: Round[]) => cpuPerThousand(list, (c) => (c.databaseMs === null ? null : c.clientMs + c.databaseMs));
  const [b, s] = [total(bare), total(store)];
  return b === null || s === null ? 'n/a' : fmtRatio(b / s);
}
