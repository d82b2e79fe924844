// Benchmark 12 (issue 24): 10,000 idle SSE followers of waiting runs: the service's memory per
// connection, and /health latency before and while they open.
import { Agent, request } from 'node:http';
import path from 'node:path';
import { BENCH_DIR, createBenchDatabase, describeMachine, fmtInt, fmtMs, fmtRatio, markdownTable, summarize, type Benchmark, type Summary } from './support.js';
import { startCompiledService } from './compiledService.js';
import { bootstrapAdmin, freePort, requestJson, rssMiB, sleep, startPeerProcess, writeProject, type ChildServer } from './httpSupport.js';

const CONNECTIONS = Number(process.env.BENCH_SSE_IDLE_CONNECTIONS ?? 10_000);
const RUNS = Number(process.env.BENCH_SSE_IDLE_RUNS ?? 100);
/** Streams being opened at once (each open is an authentication, a run look-up and a journal read). */
const OPENING = Number(process.env.BENCH_SSE_IDLE_OPENING ?? 50);
/** The service's SVC_STREAM_OPEN_CONCURRENCY (unset: its default). */
const SERVICE_OPEN_CONCURRENCY = process.env.BENCH_SSE_IDLE_OPEN_CONCURRENCY;
const IDLE_S = Number(process.env.BENCH_SSE_IDLE_S ?? 30);
/** /health is asked at this pace, one at a time, before and while the streams open. */
const HEALTH_EVERY_MS = 20;
const HEALTH_BEFORE_MS = 10_000;
/** Issue 24's target, in decimal megabytes (the table shows MiB, as /proc does: 1 MiB = 1.048576 MB). */
const TARGET_RSS_MB = 300;
const MB_PER_MIB = 1.048576;

/** Waits an hour: every run stays `waiting_timer`, so its followers stay open and idle. */
const WORKFLOW = `kind: Workflow
metadata: {name: idle, schema_version: v1, description: "Waits an hour (the idle SSE benchmark)."}
spec:
  trigger:
    http: {path: /api/idle, method: POST, public: true}
    input_schema:
      - {name: until, type: string, required: true}
  steps:
    - {id: hold, kind: Wait, until: "{{ until }}", routes: {error: END}}
    - {id: done, kind: Response, mapping: {until: until}}
`;

interface Streams {
  opened: number;
  /** Streams the service ended (or that failed) before the benchmark closed them. */
  lost: number;
  bytes: number;
  destroyAll(): void;
}

/** Opens `count` streams (`OPENING` at a time) over `urls` in turn; each holds its own socket and discards what arrives. */
async function openStreams(urls: readonly string[], count: number, token: string): Promise<Streams> {
  const sockets: { destroy(): void }[] = [];
  const streams: Streams = { opened: 0, lost: 0, bytes: 0, destroyAll: () => sockets.splice(0).forEach((s) => s.destroy()) };
  let closing = false;
  const open = (url: string) =>
    new Promise<void>((resolve, reject) => {
      const headers = { accept: 'text/event-stream', authorization: `Bearer ${token}` };
      const req = request(url, { agent: false, headers }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`GET ${url} answered ${res.statusCode}`));
        }
        streams.opened++;
        res.on('data', (chunk: Buffer) => (streams.bytes += chunk.length));
        res.on('close', () => !closing && streams.lost++);
        resolve();
      });
      req.on('error', (error) => (closing ? undefined : reject(error)));
      sockets.push(req);
      req.end();
    });
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) await open(urls[i % urls.length]!);
  };
  await Promise.all(Array.from({ length: OPENING }, worker));
  const destroy = streams.destroyAll;
  streams.destroyAll = () => {
    closing = true;
    destroy();
  };
  return streams;
}

/** Asks GET /health every `HEALTH_EVERY_MS` on one keep-alive socket until stopped; answers each answer's latency. */
function probeHealth(baseUrl: string): { stop(): Promise<Summary> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let isStopped = false;
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const t0 = performance.now();
      const req = request(`${baseUrl}/health`, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`GET /health answered ${res.statusCode}`));
          latencies.push(performance.now() - t0);
          resolve();
        });
      });
      req.on('error', reject);
      req.end();
    });
  const loop = (async () => {
    while (!isStopped) {
      const t0 = performance.now();
      await once();
      await sleep(HEALTH_EVERY_MS - (performance.now() - t0));
    }
  })();
  return {
    async stop() {
      isStopped = true;
      await loop;
      agent.destroy();
      return summarize(latencies);
    },
  };
}

async function metric(baseUrl: string, token: string, name: string): Promise<number> {
  const { body } = await requestJson(`${baseUrl}/metrics`, { token });
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(String(body));
  return match ? Number(match[1]) : NaN;
}

/** svc or the bare reference: where to ask, and whose memory to read. */
type Server = Pick<ChildServer, 'url' | 'pid'>;

/** /health before and while `CONNECTIONS` streams open on one server (svc or the bare reference). */
interface Opening {
  health: { before: Summary; opening: Summary };
  openMs: number;
  /** RSS before the streams opened, and right after. */
  rss: { before: number; opened: number };
  streams: Streams;
}

interface Figures extends Opening {
  rss: Opening['rss'] & { idle: number; closed: number };
  heapMiB: { before: number; idle: number };
  served: number;
  /** The same opening against the bare express + pg reference (`sseIdleReference.ts`). */
  bare: Opening;
}

/** Warms the stream route, probes /health alone, then while every stream opens; the streams stay open. */
async function measureOpening(server: Server, urls: readonly string[], token: string, atBaseline?: () => Promise<void>): Promise<Opening> {
  (await openStreams(urls, 100, token)).destroyAll();
  await sleep(2000);
  await atBaseline?.();
  const before = rssMiB(server.pid);
  let probe = probeHealth(server.url);
  await sleep(HEALTH_BEFORE_MS);
  const healthBefore = await probe.stop();
  probe = probeHealth(server.url);
  const t0 = performance.now();
  const streams = await openStreams(urls, CONNECTIONS, token);
  const openMs = performance.now() - t0;
  const healthOpening = await probe.stop();
  return { health: { before: healthBefore, opening: healthOpening }, openMs, rss: { before, opened: rssMiB(server.pid) }, streams };
}

/** svc's streams: opened, then held idle for `IDLE_S`, then closed. */
async function measureService(svc: Server, runIds: readonly string[], token: string): Promise<Omit<Figures, 'bare'>> {
  let heapBefore = NaN;
  const opening = await measureOpening(
    svc,
    runIds.map((id) => `${svc.url}/api/runs/${id}/events`),
    token,
    async () => {
      heapBefore = await metric(svc.url, token, 'nodejs_heap_size_used_bytes');
    },
  );
  const { streams } = opening;
  console.error(
    `  service pid ${svc.pid}: ${fmtInt(streams.opened)} streams open in ${fmtInt(opening.openMs)} ms; RSS ${fmtInt(opening.rss.before)} -> ${fmtInt(opening.rss.opened)} MiB; idling ${IDLE_S} s`,
  );
  await sleep(IDLE_S * 1000);
  const idle = rssMiB(svc.pid);
  const served = await metric(svc.url, token, 'svc_sse_connections');
  const heapIdle = await metric(svc.url, token, 'nodejs_heap_size_used_bytes');
  streams.destroyAll();
  await sleep(3000);
  return {
    ...opening,
    rss: { ...opening.rss, idle, closed: rssMiB(svc.pid) },
    heapMiB: { before: heapBefore / 2 ** 20, idle: heapIdle / 2 ** 20 },
    served,
  };
}

/** The bare reference on the same database, after svc stopped: the same runs, token and opening. */
async function measureReference(databaseUrl: string, runIds: readonly string[], token: string): Promise<Opening> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { DATABASE_URL: databaseUrl, PORT: String(port), BENCH_TOKEN: token, NODE_OPTIONS: '--import tsx' };
  const reference = await startPeerProcess('sse-idle-reference', path.join(BENCH_DIR, '..'), 'bench/sseIdleReference.ts', env, url);
  try {
    const opening = await measureOpening(
      reference,
      runIds.map((id) => `${url}/api/runs/${id}/events`),
      token,
    );
    opening.streams.destroyAll();
    console.error(`  bare reference: ${fmtInt(opening.streams.opened)} streams open in ${fmtInt(opening.openMs)} ms`);
    return opening;
  } finally {
    await reference.stop();
  }
}

async function measure(): Promise<Figures> {
  const db = await createBenchDatabase('sse_idle', 2);
  const project = writeProject('sse-idle', { 'workflows/idle.yaml': WORKFLOW });
  const env: Record<string, string> = SERVICE_OPEN_CONCURRENCY ? { SVC_STREAM_OPEN_CONCURRENCY: SERVICE_OPEN_CONCURRENCY } : {};
  try {
    const svc = await startCompiledService('sse-idle', { databaseUrl: db.url, projectDir: project.dir, env });
    const runIds: string[] = [];
    let token: string;
    let figures: Omit<Figures, 'bare'>;
    try {
      token = await bootstrapAdmin(svc.url);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      for (let i = 0; i < RUNS; i++) {
        const started = await requestJson(`${svc.url}/api/idle?wait=false`, { json: { until } });
        if (started.status !== 202) throw new Error(`POST /api/idle?wait=false answered ${started.status}: ${JSON.stringify(started.body)}`);
        runIds.push(started.body.id as string);
      }
      figures = await measureService(svc, runIds, token);
    } finally {
      await svc.stop();
    }
    return { ...figures, bare: await measureReference(db.url, runIds, token) };
  } finally {
    project.remove();
    await db.drop();
  }
}

export const sseIdleBenchmark: Benchmark = {
  name: 'sse-idle',
  description: `${fmtInt(CONNECTIONS)} idle SSE followers (GET /api/runs/{id}/events of ${RUNS} waiting runs): service RSS per connection, /health p99 while they open`,
  async run() {
    const machine = await describeMachine();
    const f = await measure();
    const perConnKiB = ((f.rss.idle - f.rss.before) * 1024) / Math.max(1, f.streams.opened);
    const healthRow = (label: string, s: Summary) => [label, fmtInt(s.count), fmtMs(s.p50), `**${fmtMs(s.p99)}**`, fmtMs(s.max)];
    const idleMB = f.rss.idle * MB_PER_MIB;
    const isMet = idleMB < TARGET_RSS_MB && f.streams.opened === CONNECTIONS && f.streams.lost === 0;
    const markdown = [
      '## 12. Idle SSE connections (`npm run bench -- sse-idle`)',
      '',
      `${new Date().toISOString()} · ${machine}`,
      '',
      `svc runs as production runs it (\`node bin/svc.js serve\` over \`dist/\`, a fresh database; \`npm run build\` first) with a workflow that waits an hour (Wait, then Response). ` +
        `The parent starts ${RUNS} runs (\`?wait=false\`), opens and closes 100 streams (warm-up), waits 2 s, then opens ${fmtInt(CONNECTIONS)} ` +
        `streams \`GET /api/runs/{id}/events\` (the route \`svc runs follow\` and the TS client use; admin token; raw \`node:http\`, one socket each, ` +
        `${OPENING} being opened at a time), ${fmtInt(CONNECTIONS / RUNS)} per run, and holds them idle for ${IDLE_S} s (the service sends ` +
        `its heartbeat comment every 15 s). RSS is the service process's VmRSS. /health is asked every ${HEALTH_EVERY_MS} ms on one keep-alive ` +
        `socket for ${HEALTH_BEFORE_MS / 1000} s before, then while the streams open. ` +
        `The bare reference (\`bench/sseIdleReference.ts\`, a process of its own started after svc stopped, on the same database) is express + pg ` +
        `answering the same route for the same runs and token: the bearer compared as text, the run's row and its journal read, the frames written, ` +
        `one heartbeat timer; its /health is \`SELECT 1\` on a connection of its own, as svc's. The same client opens the same ${fmtInt(CONNECTIONS)} streams ` +
        `while probing it the same way: a floor for what a Node process opening streams this fast does to its own /health on this machine.`,
      '',
      markdownTable(
        ['service RSS', 'MiB'],
        [
          ['before (runs waiting, warm)', fmtInt(f.rss.before)],
          [`${fmtInt(f.streams.opened)} streams just opened`, fmtInt(f.rss.opened)],
          [`after ${IDLE_S} s idle`, `**${fmtInt(f.rss.idle)}**`],
          ['3 s after the client closed them', fmtInt(f.rss.closed)],
        ],
      ),
      '',
      markdownTable(
        ['/health', 'answers', 'p50 ms', 'p99 ms', 'max ms'],
        [
          healthRow('svc, before', f.health.before),
          healthRow('svc, while opening', f.health.opening),
          healthRow('bare reference, before', f.bare.health.before),
          healthRow('bare reference, while opening', f.bare.health.opening),
        ],
      ),
      '',
      `/health p99 while opening: svc **${fmtMs(f.health.opening.p99)} ms** (${fmtMs(f.health.before.p99)} before), the bare reference ` +
        `${fmtMs(f.bare.health.opening.p99)} ms (${fmtMs(f.bare.health.before.p99)} before): **${fmtRatio(f.health.opening.p99 / f.bare.health.opening.p99)}x** ` +
        `the reference's. Opening took svc ${fmtInt(f.openMs)} ms, the reference ${fmtInt(f.bare.openMs)} ms (${fmtInt(f.bare.streams.opened)} streams; ` +
        `its RSS ${fmtInt(f.bare.rss.before)} -> ${fmtInt(f.bare.rss.opened)} MiB).`,
      '',
      `**${fmtInt(f.rss.idle)} MiB RSS = ${fmtInt(idleMB)} MB** with ${fmtInt(f.streams.opened)} idle streams (target < ${TARGET_RSS_MB} MB with every stream open: ` +
        `${isMet ? 'met' : 'missed'}): ${fmtInt(perConnKiB)} KiB per connection over the baseline; JS heap used ${fmtInt(f.heapMiB.before)} -> ` +
        `${fmtInt(f.heapMiB.idle)} MiB. Opening took ${fmtInt(f.openMs)} ms; the service counted ${fmtInt(f.served)} open streams ` +
        `(\`svc_sse_connections\`); ${fmtInt(f.streams.lost)} ended early; ${fmtInt(f.streams.bytes / 1024)} KiB received in all.`,
    ].join('\n');
    return { title: 'sse-idle', markdown };
  },
};
