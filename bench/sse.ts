// Benchmark 8 (issue 5): SSE fan-out, 1,000 clients following runs, latency from the append to the client.
import { request, type IncomingMessage } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createParser } from 'eventsource-parser';
import {
  createBenchDatabase,
  describeMachine,
  fmtInt,
  fmtMs,
  fmtRatio,
  markdownTable,
  summarize,
  wallClockMs,
  type Benchmark,
  type Summary,
} from './support.js';
import { bootstrapAdmin, requestJson, SERVICE_LOG_LEVEL, sleep, startServiceProcess, writeProject } from './httpSupport.js';

const CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 1000);
const RUNS = Number(process.env.BENCH_SSE_RUNS ?? 20);
const CLIENTS_PER_RUN = Math.ceil(CLIENTS / RUNS);
const TICKS = 10;
const TICK_MS = 300;
/** The first step waits this long so that every client is connected before the ticks start. */
const GATE_MS = Number(process.env.BENCH_SSE_GATE_MS ?? 5000);
const TARGET_P99_MS = 50;
const PHASE_LIMIT_MS = GATE_MS + TICKS * TICK_MS + 60_000;

const pauseRunner = `// Waits params.ms milliseconds and counts the ticks (the SSE benchmark's slow step).
export default async function pause(ctx, step) {
  await new Promise((resolve) => setTimeout(resolve, Number(step.params.ms ?? 0)));
  return { ticks: (ctx.ticks ?? 0) + 1 };
}
`;

function tickerWorkflow(): string {
  const step = (id: string, ms: number) => `    - {id: ${id}, kind: Functional, runner: pause, params: {ms: ${ms}}, routes: {error: END}}`;
  return [
    'kind: Workflow',
    'metadata:',
    '  name: ticker',
    '  schema_version: v1',
    '  description: A gate, then ten slow steps (the SSE fan-out benchmark).',
    'spec:',
    '  trigger:',
    '    http: {path: /api/ticker, method: POST, public: true}',
    '  output: result',
    '  steps:',
    step('gate', GATE_MS),
    ...Array.from({ length: TICKS }, (_, i) => step(`tick${i + 1}`, TICK_MS)),
    '    - id: respond',
    '      kind: Response',
    '      mapping: {ticks: ticks}',
    '',
  ].join('\n');
}

/** `2026-11-22T02:22:58.050123Z` -> epoch milliseconds with the microseconds kept. */
function isoToMs(iso: string): number {
  const match = /^(.+?)(?:\.(\d+))?Z$/.exec(iso);
  if (!match) return Date.parse(iso);
  return Date.parse(`${match[1]}Z`) + (match[2] ? Number(`0.${match[2]}`) * 1000 : 0);
}

interface Phase {
  clients: number;
  connected: number;
  finished: number;
  frames: number;
  gaps: number;
  latencies: number[];
  connectMs: number;
  loopDelayP99: number;
}

/** Opens one SSE stream; answers once its headers arrive (with a promise of its end). */
function follow(url: string, headers: Record<string, string>, phase: Phase): Promise<{ ended: Promise<void>; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET ${url} answered ${res.statusCode}`));
        res.resume();
        return;
      }
      const connectedAt = wallClockMs();
      phase.connected++;
      let lastSeq = 0;
      const parser = createParser({
        onEvent(event) {
          const receivedAt = wallClockMs();
          const data = JSON.parse(event.data) as { seq: number; ts?: string; ts_ms?: number };
          const appendedAt = data.ts_ms ?? isoToMs(data.ts!);
          phase.frames++;
          // Only frames appended after this client was connected: the rest is the journal replay.
          if (appendedAt >= connectedAt) phase.latencies.push(receivedAt - appendedAt);
          if (data.seq !== lastSeq + 1) phase.gaps++;
          lastSeq = data.seq;
        },
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      const ended = new Promise<void>((done) => {
        res.on('end', () => {
          phase.finished++;
          done();
        });
        res.on('error', () => done());
        res.on('close', () => done());
      });
      resolve({ ended, destroy: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Connects every client, then runs `start` (the reference's runs; svc's were started before), and waits for every stream to end. */
async function runPhase(urls: string[], headers: Record<string, string>, start?: () => Promise<unknown>): Promise<Phase> {
  const phase: Phase = { clients: urls.length, connected: 0, finished: 0, frames: 0, gaps: 0, latencies: [], connectMs: 0, loopDelayP99: 0 };
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const t0 = performance.now();
  const streams = await Promise.all(urls.map((url) => follow(url, headers, phase)));
  phase.connectMs = performance.now() - t0;
  await start?.();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, PHASE_LIMIT_MS)));
  await Promise.race([Promise.all(streams.map((s) => s.ended)), limit]);
  clearTimeout(timer);
  for (const s of streams) s.destroy();
  loop.disable();
  phase.loopDelayP99 = loop.percentile(99) / 1e6;
  return phase;
}

export const sseBenchmark: Benchmark = {
  name: 'sse',
  description: `SSE fan-out: ${CLIENTS} clients on ${RUNS} runs via GET /api/runs/{id}/events, append-to-client latency, vs a bare fan-out`,
  async run() {
    const db = await createBenchDatabase('sse', 2);
    const project = writeProject('sse', { 'workflows/ticker.yaml': tickerWorkflow(), 'nodes/pause.mjs': pauseRunner });
    const svc = await startServiceProcess('sse', { databaseUrl: db.url, projectDir: project.dir, reference: 'sse' });
    try {
      const token = await bootstrapAdmin(svc.url);
      const phases: Record<'svc' | 'ref', Phase[]> = { svc: [], ref: [] };
      for (const job of ['ref', 'svc', 'svc', 'ref'] as const) {
        await db.pool.query('CHECKPOINT');
        const phase = job === 'svc' ? await measureSvc(svc.url, token) : await measureReference(svc.referenceUrl!);
        phases[job].push(phase);
        const s = summarize(phase.latencies);
        console.error(
          `  ${job}: ${fmtInt(phase.finished)}/${fmtInt(phase.clients)} streams ended, ${fmtInt(phase.latencies.length)} live frames, ` +
            `p50 ${fmtMs(s.p50)} ms, p99 ${fmtMs(s.p99)} ms; loop delay p99 ${fmtMs(phase.loopDelayP99)} ms`,
        );
      }
      return { title: 'sse', markdown: await report(phases) };
    } finally {
      await svc.stop();
      project.remove();
      await db.drop();
    }
  },
};

async function measureSvc(baseUrl: string, token: string): Promise<Phase> {
  const runIds: string[] = [];
  const t0 = performance.now();
  for (let i = 0; i < RUNS; i++) {
    // Starts spread over one tick, so that the runs' events do not all land at once.
    await sleep(t0 + (i * TICK_MS) / RUNS - performance.now());
    const started = await requestJson(`${baseUrl}/api/ticker?wait=false`, { json: {}, token });
    if (started.status !== 202) throw new Error(`POST /api/ticker?wait=false answered ${started.status}: ${JSON.stringify(started.body)}`);
    runIds.push(started.body.id as string);
  }
  const urls = runIds.flatMap((id) => Array.from({ length: CLIENTS_PER_RUN }, () => `${baseUrl}/api/runs/${id}/events`)).slice(0, CLIENTS);
  return runPhase(urls, { authorization: `Bearer ${token}` });
}

async function measureReference(referenceUrl: string): Promise<Phase> {
  const urls = Array.from({ length: CLIENTS }, (_, i) => `${referenceUrl}/events?run=${Math.floor(i / CLIENTS_PER_RUN)}`);
  const plan = `runs=${RUNS}&ticks=${TICKS}&tick_ms=${TICK_MS}&gate_ms=500`;
  return runPhase(urls, {}, () => fetch(`${referenceUrl}/start?${plan}`, { method: 'POST' }));
}

interface Combined {
  latency: Summary;
  p99s: number[];
  clients: number;
  finished: number;
  frames: number;
  live: number;
  gaps: number;
  connectMs: number;
  loopDelayP99: number;
}

function combine(list: Phase[]): Combined {
  return {
    latency: summarize(list.flatMap((p) => p.latencies)),
    p99s: list.map((p) => summarize(p.latencies).p99),
    clients: list.reduce((n, p) => n + p.clients, 0),
    finished: list.reduce((n, p) => n + p.finished, 0),
    frames: list.reduce((n, p) => n + p.frames, 0),
    live: list.reduce((n, p) => n + p.latencies.length, 0),
    gaps: list.reduce((n, p) => n + p.gaps, 0),
    connectMs: Math.max(...list.map((p) => p.connectMs)),
    loopDelayP99: Math.max(...list.map((p) => p.loopDelayP99)),
  };
}

async function report(phases: Record<'svc' | 'ref', Phase[]>): Promise<string> {
  const svc = combine(phases.svc);
  const ref = combine(phases.ref);
  const row = (label: string, c: Combined) => [
    label,
    fmtMs(c.latency.p50),
    `**${fmtMs(c.latency.p99)}** (${c.p99s.map(fmtMs).join(', ')})`,
    fmtMs(c.latency.max),
    `${fmtInt(c.live)} / ${fmtInt(c.frames)}`,
    `${fmtInt(c.finished)} / ${fmtInt(c.clients)}${c.gaps ? `, ${fmtInt(c.gaps)} seq gaps` : ''}`,
    fmtInt(c.connectMs),
    fmtMs(c.loopDelayP99),
  ];
  const isMet = svc.latency.p99 < TARGET_P99_MS && svc.finished === svc.clients && svc.gaps === 0;
  return [
    '## 8. SSE fan-out: 1,000 clients following runs (`npm run bench -- sse`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `svc runs in a child process (\`bench/serviceProcess.ts\`: \`startService\`, log level ${SERVICE_LOG_LEVEL}, a fresh database) with a ` +
      `workflow \`ticker\`: a Functional step of ${GATE_MS / 1000} s, then ${TICKS} Functional steps of ${TICK_MS} ms (a \`.mjs\` runner ` +
      `that sleeps), then a Response step. The parent starts ${RUNS} runs (\`POST /api/ticker?wait=false\`, admin token) and opens ` +
      `${fmtInt(CLIENTS)} streams, ${CLIENTS_PER_RUN} per run, \`GET /api/runs/{id}/events\` (raw \`node:http\`, one socket each, frames ` +
      "parsed with `eventsource-parser`). Latency = receive time in the parent - the event's `ts` (its `recorded_at`, PostgreSQL `now()` " +
      "of the appending transaction, same machine clock); only frames appended after the client's stream opened count (not the replay). " +
      'The reference (`bench/referenceSse.ts`, same process as svc, own port) plays the same shape to the same number of clients: per ' +
      `run (runs spread over one tick), every ${TICK_MS} ms two events, each one autocommit \`INSERT ... RETURNING now()\` into a bare table followed by a direct write ` +
      "of the frame to that run's sockets. Order reference, svc, svc, reference; percentiles over both rounds' frames (each round's p99 " +
      'in brackets). "Loop delay" is the parent\'s (the clients\') event-loop delay p99: how much of the latency the measuring side itself adds.',
    '',
    markdownTable(
      ['job', 'p50 ms', 'p99 ms', 'max ms', 'live / all frames', 'streams ended / opened', 'connect ms', 'loop delay p99 ms'],
      [row('svc: append -> SSE client', svc), row('reference: bare INSERT -> direct socket write', ref)],
    ),
    '',
    `**p99 ${fmtMs(svc.latency.p99)} ms** (target < ${TARGET_P99_MS} ms with every stream complete: ${isMet ? 'met' : 'missed'}); ` +
      `ratio to the reference: p50 ${fmtRatio(svc.latency.p50 / ref.latency.p50)}x, p99 ${fmtRatio(svc.latency.p99 / ref.latency.p99)}x.`,
  ].join('\n');
}
