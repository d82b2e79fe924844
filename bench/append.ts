// Benchmark 1: single-event appends to new streams, 10 in flight, against a bare INSERT of the same row.
import { randomUUID } from 'node:crypto';
import { EventStore, NO_STREAM } from '../src/eventstore/index.js';
import { ProjectionRegistry } from '../src/projections/index.js';
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

const APPENDS = Number(process.env.BENCH_APPENDS ?? 20_000);
const WARM_UP = 1_000;
const CONCURRENCY = 10;
/** Rounds alternate bare and store so drift (table growth, checkpoints) hits both alike. */
const ROUNDS = 3;

interface Round {
  kind: 'bare' | 'store';
  eventsPerSecond: number;
  latency: Summary;
}

export const appendBenchmark: Benchmark = {
  name: 'append',
  description: `${APPENDS} single-event appends to new streams, ${CONCURRENCY} in flight, EventStore.append vs a bare INSERT`,
  async run() {
    const db = await createBenchDatabase('append', CONCURRENCY);
    try {
      // No projection registered: the store takes its single-statement autocommit path.
      const store = new EventStore({ pool: db.pool, projector: new ProjectionRegistry() });
      const streamIds = (n: number) => Array.from({ length: n }, () => `run-${randomUUID()}`);

      const viaStore = async (n: number): Promise<Round> => {
        const ids = streamIds(n);
        const { elapsedMs, latencies } = await runClosedLoop(n, CONCURRENCY, (i) =>
          store.append(
            { streamId: ids[i]!, expectedVersion: NO_STREAM, events: [{ type: 'RunStarted', data: sampleRunStarted(i) }] },
            { metadata: SAMPLE_METADATA },
          ),
        );
        return { kind: 'store', eventsPerSecond: (n * 1000) / elapsedMs, latency: summarize(latencies) };
      };
      const viaBareInsert = async (n: number): Promise<Round> => {
        const ids = streamIds(n);
        const { elapsedMs, latencies } = await runClosedLoop(n, CONCURRENCY, (i) =>
          db.pool.query(
            `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata)
             VALUES ($1, $2, 1, $3, $4, $5)`,
            [ids[i], 'run', 'RunStarted', sampleRunStarted(i), SAMPLE_METADATA],
          ),
        );
        return { kind: 'bare', eventsPerSecond: (n * 1000) / elapsedMs, latency: summarize(latencies) };
      };

      await viaBareInsert(WARM_UP);
      await viaStore(WARM_UP);
      const rounds: Round[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        // Alternate which goes first so neither always meets the bigger table.
        const order = r % 2 === 0 ? [viaBareInsert, viaStore] : [viaStore, viaBareInsert];
        for (const run of order) {
          await db.pool.query('CHECKPOINT');
          const round = await run(APPENDS);
          rounds.push(round);
          console.error(`  round ${r + 1} ${round.kind}: ${fmtInt(round.eventsPerSecond)} events/s`);
        }
      }
      return { title: 'append', markdown: await report(rounds) };
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
    fmtMs(Math.max(...list.map((r) => r.latency.max))),
  ];
  const store = median(of('store').map((r) => r.eventsPerSecond));
  const bare = median(of('bare').map((r) => r.eventsPerSecond));
  const ratio = store / bare;
  const perRound = of('store').map((s, i) => fmtRatio(s.eventsPerSecond / of('bare')[i]!.eventsPerSecond));
  return [
    `## 1. Single-event appends (\`npm run bench -- append\`)`,
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `${ROUNDS} alternating rounds of ${fmtInt(APPENDS)} appends each (after ${fmtInt(WARM_UP)} warm-up calls of each), ` +
      `${CONCURRENCY} in flight on one ${CONCURRENCY}-connection pool, each call to a new \`run-<uuid>\` stream. ` +
      'Events/s is the median of the rounds (all rounds in brackets); p50/p99 per call are the medians over rounds, max the worst.',
    '',
    markdownTable(
      ['job', 'events/s', 'p50 ms', 'p99 ms', 'max ms'],
      [
        row('`EventStore.append`, expected version `NO_STREAM`, no projection', of('store')),
        row('reference: bare `INSERT INTO events (...) VALUES (...)` of the same row, same pool', of('bare')),
      ],
    ),
    '',
    `**Ratio store / bare INSERT: ${fmtRatio(ratio)}** (per round: ${perRound.join(', ')}). Target >= 0.80: ` + `${ratio >= 0.8 ? 'met' : 'missed'}.`,
  ].join('\n');
}
