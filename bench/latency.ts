// Benchmark 4: append-to-subscriber latency across two processes, against a bare LISTEN/NOTIFY ping.
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { loadSettings } from '../src/config/settings.js';
import { selectGlobalHead } from '../src/eventstore/sql.js';
import { createLogger } from '../src/kernel/logger.js';
import { startKernel } from '../src/main.js';
import {
  BENCH_DIR,
  createBenchDatabase,
  describeMachine,
  fmtInt,
  fmtMs,
  fmtRatio,
  markdownTable,
  median,
  PING_CHANNEL,
  summarize,
  wallClockMs,
  type Benchmark,
  type Summary,
  type WriterResult,
} from './support.js';

const RATE = 1000;
const DURATION_MS = Number(process.env.BENCH_LATENCY_MS ?? 10_000);
/** The first second is warm-up (connections, JIT) and is left out of the figures. */
const WARM_UP_SENDS = RATE;
const CHILD_TIMEOUT_MS = DURATION_MS + 60_000;
const DRAIN_TIMEOUT_MS = 5_000;
const TARGET_P99_MS = 20;
const REPS = Number(process.env.BENCH_LATENCY_REPS ?? 3);

interface Phase extends WriterResult {
  received: number;
  duplicates: number;
  latency: Summary;
}

/** Collects (seq, latency) once per seq; counts duplicates. */
class Receiver {
  readonly latencies = new Map<number, number>();
  duplicates = 0;

  take(seq: number, sentAt: number): void {
    const latency = wallClockMs() - sentAt;
    if (this.latencies.has(seq)) this.duplicates++;
    else this.latencies.set(seq, latency);
  }

  async drain(expected: number): Promise<void> {
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (this.latencies.size < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  }

  phase(result: WriterResult): Phase {
    const measured = [...this.latencies].filter(([seq]) => seq >= WARM_UP_SENDS).map(([, ms]) => ms);
    return { ...result, received: this.latencies.size, duplicates: this.duplicates, latency: summarize(measured) };
  }
}

/** Runs the writer process to its end (bounded) and answers what it sent. */
function runWriter(mode: 'store' | 'ping' | 'insert-notify', url: string): Promise<WriterResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'latencyWriter.ts'), mode, url, String(RATE), String(DURATION_MS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${mode} writer ran longer than ${CHILD_TIMEOUT_MS} ms`));
    }, CHILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`the ${mode} writer exited with ${code}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as WriterResult);
    });
  });
}

/** The subscriber is a kernel of its own; it follows the global log from its head. */
async function measureStore(url: string): Promise<Phase> {
  const settings = loadSettings({ DATABASE_URL: url, SVC_LOG_LEVEL: 'silent' }, BENCH_DIR);
  const kernel = await startKernel(settings, createLogger('silent'), {
    database: { url, isEmbedded: false, stop: async () => undefined },
    migrate: false,
    projections: [],
  });
  const receiver = new Receiver();
  try {
    const head = await selectGlobalHead(kernel.pool);
    const subscription = kernel.follower.subscribeToAll(head).subscribe((event) => {
      if (event.type === 'LatencyProbe') receiver.take(Number(event.data.seq), Number(event.data.sentAt));
    });
    const result = await runWriter('store', url);
    await receiver.drain(result.sent - result.failed);
    subscription.unsubscribe();
    return receiver.phase(result);
  } finally {
    await kernel.close();
  }
}

async function measurePing(url: string, mode: 'ping' | 'insert-notify'): Promise<Phase> {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const receiver = new Receiver();
  try {
    listener.on('notification', (message) => {
      if (message.channel !== PING_CHANNEL || !message.payload) return;
      const { seq, sentAt } = JSON.parse(message.payload) as { seq: number; sentAt: number };
      receiver.take(seq, sentAt);
    });
    await listener.query(`LISTEN ${PING_CHANNEL}`);
    const result = await runWriter(mode, url);
    await receiver.drain(result.sent - result.failed);
    return receiver.phase(result);
  } finally {
    await listener.end();
  }
}

type Mode = 'ping' | 'store' | 'insert-notify';
const MODES: readonly Mode[] = ['ping', 'store', 'insert-notify'];

export const latencyBenchmark: Benchmark = {
  name: 'latency',
  description: `append-to-subscriber latency across two processes at ${RATE} appends/s, ${REPS} x ${DURATION_MS / 1000} s, vs bare NOTIFY pings`,
  async run() {
    const db = await createBenchDatabase('latency', 10);
    try {
      const phases: Record<Mode, Phase[]> = { ping: [], store: [], 'insert-notify': [] };
      for (let rep = 0; rep < REPS; rep++) {
        // Rotate the order so no phase always runs first or last.
        for (const mode of [...MODES.slice(rep % MODES.length), ...MODES.slice(0, rep % MODES.length)]) {
          // A checkpoint left over from an earlier benchmark or phase would stall commits mid-phase.
          await db.pool.query('CHECKPOINT');
          const phase = mode === 'store' ? await measureStore(db.url) : await measurePing(db.url, mode);
          phases[mode].push(phase);
          console.error(
            `  ${rep + 1} ${mode}: p50 ${fmtMs(phase.latency.p50)} ms, p99 ${fmtMs(phase.latency.p99)} ms; ` +
              `writer calls p50 ${fmtMs(phase.callP50)} p99 ${fmtMs(phase.callP99)} ms`,
          );
        }
      }
      return { title: 'latency', markdown: await report(phases) };
    } finally {
      await db.drop();
    }
  },
};

/** Medians over repetitions (max: the worst), received and sent summed. */
function combine(list: Phase[]): Phase & { p99s: number[] } {
  const med = (pick: (p: Phase) => number) => median(list.map(pick));
  return {
    sent: list.reduce((n, p) => n + p.sent, 0),
    failed: list.reduce((n, p) => n + p.failed, 0),
    received: list.reduce((n, p) => n + p.received, 0),
    duplicates: list.reduce((n, p) => n + p.duplicates, 0),
    callP50: med((p) => p.callP50),
    callP99: med((p) => p.callP99),
    elapsedMs: med((p) => p.elapsedMs),
    latency: { count: 0, p50: med((p) => p.latency.p50), p99: med((p) => p.latency.p99), max: Math.max(...list.map((p) => p.latency.max)) },
    p99s: list.map((p) => p.latency.p99),
  };
}

async function report(phases: Record<Mode, Phase[]>): Promise<string> {
  const store = combine(phases.store);
  const ping = combine(phases.ping);
  const insertNotify = combine(phases['insert-notify']);
  const row = (label: string, p: ReturnType<typeof combine>) => [
    label,
    fmtMs(p.latency.p50),
    `**${fmtMs(p.latency.p99)}** (${p.p99s.map(fmtMs).join(', ')})`,
    fmtMs(p.latency.max),
    `${fmtMs(p.callP50)} / ${fmtMs(p.callP99)}`,
    `${fmtInt(p.received)} / ${fmtInt(p.sent)}${p.failed ? ` (${p.failed} failed)` : ''}${p.duplicates ? `, ${p.duplicates} duplicates` : ''}`,
  ];
  const met = store.latency.p99 < TARGET_P99_MS && store.received === store.sent;
  return [
    `## 4. Append-to-subscriber latency across two processes (\`npm run bench -- latency\`)`,
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `A child process (\`bench/latencyWriter.ts\`, its own \`startKernel\`) appends one \`LatencyProbe\` event to a new stream ` +
      `every ${1000 / RATE} ms (open loop, ${RATE}/s for ${DURATION_MS / 1000} s) carrying its send time ` +
      '(`performance.timeOrigin + performance.now()`, the same machine clock in both processes). The parent, a second kernel, ' +
      'subscribes with `LogFollower.subscribeToAll` from the log head; latency = receive time - send time. The path: autocommit ' +
      'INSERT, commit, batched NOTIFY from the writer, LISTEN wake-up in the reader, gated read of the global log, delivery. ' +
      `The reference sends \`pg_notify\` with the timestamp from the same kind of child through a 10-connection pool at the same ` +
      `rate to a parent LISTEN connection; the second reference first INSERTs the same row (autocommit, the durable commit ` +
      `an append pays) and then sends the ping. The first second (${fmtInt(WARM_UP_SENDS)} sends) of each phase is warm-up and ` +
      `not counted. ${REPS} repetitions of the three phases in rotating order; p50, p99 and the writer's figures are medians ` +
      "over repetitions (each repetition's p99 in brackets), max is the worst; received / sent are summed.",
    '',
    markdownTable(
      ['job', 'p50 ms', 'p99 ms', 'max ms', 'writer call p50 / p99 ms', 'received / sent'],
      [
        row('append -> `subscribeToAll` in another process', store),
        row('reference: bare `pg_notify` -> `LISTEN` ping', ping),
        row('second reference: bare `INSERT` of the event (durable commit), then `pg_notify` -> `LISTEN`', insertNotify),
      ],
    ),
    '',
    `**p99 ${fmtMs(store.latency.p99)} ms** (target < ${TARGET_P99_MS} ms: ${met ? 'met' : 'missed'}); ` +
      `ratio to the bare ping: p50 ${fmtRatio(store.latency.p50 / ping.latency.p50)}x, p99 ${fmtRatio(store.latency.p99 / ping.latency.p99)}x; ` +
      `to INSERT + ping: p50 ${fmtRatio(store.latency.p50 / insertNotify.latency.p50)}x, p99 ${fmtRatio(store.latency.p99 / insertNotify.latency.p99)}x. ` +
      'The writer-call column is how long the append (or INSERT, or pg_notify) call itself took in the writer: the part of ' +
      'the latency spent before the event was even committed.',
  ].join('\n');
}
