// Benchmark 10 (issue 17): durable timers at scale. Steady: N runs (10,000; `--count=N` or
// BENCH_TIMERS_RUNS) each wait 1-5 s from their start. Burst: N runs wait until a common release time
// plus 1-5 s, so all of them wait at once, then fire through the claim loop. Measured: each timer's lateness (timer_fired's commit time minus its
// fires_at) against the claim interval, and the service process's memory while they wait.
import { createBenchDatabase, describeMachine, fmtInt, fmtMs, fmtRatio, markdownTable, runClosedLoop, summarize, type Benchmark } from './support.js';
import type { Pool } from '../src/db/pool.js';
import { requestJson, rssMiB, sleep, startServiceProcess, writeProject } from './httpSupport.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const COUNT = Number(flag('count') ?? process.env.BENCH_TIMERS_RUNS ?? 10_000);
/** The service's default SVC_RUN_CLAIM_INTERVAL_MS: the reference the lateness is read against. */
const CLAIM_INTERVAL_MS = Number(flag('claim-interval') ?? 1000);
const CONCURRENCY = 50;
/** Steady phase: runs created per second, paced (below what this machine creates and fires at once). */
const STEADY_RATE = Number(flag('rate') ?? 100);
/** Runs of the one-step reference workflow that time run creation (and set how long creating the timer runs may take). */
const CALIBRATION_RUNS = 300;
const TARGET_SLACK_MS = 100;

const WORKFLOW = `kind: Workflow
metadata: {name: timer, schema_version: v1, description: "Waits until fire_at, then answers."}
spec:
  trigger:
    http: {path: /api/timer, method: POST, public: true}
    input_schema:
      - {name: fire_at, type: string, required: true}
  steps:
    - id: hold
      kind: Wait
      until: "{{ fire_at }}"
      routes: {error: END}
    - id: done
      kind: Response
      mapping: {fire_at: fire_at}
`;

/** The reference for creation: the same trigger and Response, without the Wait. */
const PLAIN = `kind: Workflow
metadata: {name: plain, schema_version: v1, description: "Answers at once."}
spec:
  trigger:
    http: {path: /api/plain, method: POST, public: true}
  steps:
    - {id: done, kind: Response, mapping: {fire_at: fire_at}}
`;

interface Sampler {
  samples: { at: number; rss: number }[];
  stop(): void;
}

function sampleMemory(pid: number, everyMs = 200): Sampler {
  const samples: { at: number; rss: number }[] = [];
  const timer = setInterval(() => samples.push({ at: Date.now(), rss: rssMiB(pid) }), everyMs);
  return { samples, stop: () => clearInterval(timer) };
}

async function createTimerRun(url: string, i: number, fireAt: (i: number) => string): Promise<void> {
  const answer = await requestJson(`${url}/api/timer?wait=false`, { json: { fire_at: fireAt(i) } });
  if (answer.status !== 202) throw new Error(`run ${i} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
}

/** Creates `count` runs of the timer workflow over HTTP (202 each), run i due at fireAt(i), as fast as they go. */
function createTimerRuns(url: string, count: number, fireAt: (i: number) => string) {
  return runClosedLoop(count, CONCURRENCY, (i) => createTimerRun(url, i, fireAt));
}

/** The same at `perS` runs a second (open loop: run i is sent at i / perS seconds, whatever the answers). */
async function createTimerRunsPaced(url: string, count: number, perS: number, fireAt: (i: number) => string) {
  const start = Date.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, start + (i * 1000) / perS - Date.now()));
    const created: Promise<void> = createTimerRun(url, i, fireAt).finally(() => inFlight.delete(created));
    inFlight.add(created);
    if (inFlight.size >= CONCURRENCY) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  return { elapsedMs: Date.now() - start };
}

async function untilAllCompleted(pool: Pool): Promise<void> {
  const since = Date.now();
  while (Date.now() - since < 120_000) {
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM svc_runs WHERE status <> 'completed'`);
    if (Number(rows[0]!.n) === 0) return;
    await sleep(250);
  }
}

/** Lateness of the timers due after `since` that waited (a run created after its time fires at once, with no timer to be late). */
async function latenessSince(pool: Pool, since: number) {
  const { rows } = await pool.query<{ late: number; waited: boolean }>(
    `SELECT extract(epoch FROM (f.recorded_at - (f.data->'payload'->>'fires_at')::timestamptz)) * 1000 AS late,
            s.recorded_at < (f.data->'payload'->>'fires_at')::timestamptz AS waited
     FROM events f JOIN events s ON s.stream_id = f.stream_id AND s.type = 'timer_started'
     WHERE f.type = 'timer_fired' AND (f.data->'payload'->>'fires_at')::timestamptz > $1`,
    [new Date(since).toISOString()],
  );
  const late = rows.filter((r) => r.waited).map((r) => Number(r.late));
  const sorted = [...late].sort((x, y) => x - y);
  return { ...summarize(late), p90: sorted[Math.ceil(0.9 * sorted.length) - 1] ?? NaN, fired: rows.length, waited: late.length };
}

async function measure() {
  const db = await createBenchDatabase('timers', 4);
  const project = writeProject('timers', { 'workflows/timer.yaml': WORKFLOW, 'workflows/plain.yaml': PLAIN });
  const svc = await startServiceProcess('timers', {
    databaseUrl: db.url,
    projectDir: project.dir,
    env: { SVC_RUN_CLAIM_INTERVAL_MS: String(CLAIM_INTERVAL_MS) },
  });
  try {
    const warm = await requestJson(`${svc.url}/api/timer`, { json: { fire_at: new Date().toISOString() } });
    if (warm.status !== 201) throw new Error(`warm-up run answered ${warm.status}: ${JSON.stringify(warm.body)}`);
    const memory = sampleMemory(svc.pid);
    const plain = await runClosedLoop(CALIBRATION_RUNS, CONCURRENCY, async () => {
      const answer = await requestJson(`${svc.url}/api/plain?wait=false`, { json: {} });
      if (answer.status !== 202) throw new Error(`a reference run answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    });
    const plainPerS = CALIBRATION_RUNS / (plain.elapsedMs / 1000);
    // Idle after the reference runs: the HTTP and journal paths are warm, nothing waits.
    await sleep(1000);
    const idle = rssMiB(svc.pid);
    // A timer run takes one commit more than the reference: 1.6 times its time, plus slack, keeps every run created before it is due.
    const release = Date.now() + Math.round((1.6 * COUNT * 1000) / plainPerS) + 3000;
    const fireAt = (i: number) => new Date(release + 1000 + ((i * 7919) % 4000)).toISOString();
    console.error(`  creating ${fmtInt(COUNT)} runs (release in ${fmtInt(release - Date.now())} ms)`);
    const created = await createTimerRuns(svc.url, COUNT, fireAt);
    const lateCreations = Date.now() > release ? `The setup overran the release time by ${fmtInt(Date.now() - release)} ms.` : '';
    await sleep(Math.max(0, release - Date.now()));
    const waiting = Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM svc_runs WHERE status = 'waiting_timer'`)).rows[0]!.n);
    const waitingRss = rssMiB(svc.pid);
    await untilAllCompleted(db.pool);
    await sleep(3000);
    const afterRss = rssMiB(svc.pid);
    memory.stop();
    const firingRss = Math.max(...memory.samples.filter((s) => s.at >= release).map((s) => s.rss));
    const burst = await latenessSince(db.pool, release);
    // Steady: each run waits 1-5 s from its own start, so timers fall due as fast as runs are created.
    const steadyFrom = Date.now();
    const steadyCreated = await createTimerRunsPaced(svc.url, COUNT, STEADY_RATE, (i) => new Date(Date.now() + 1000 + ((i * 7919) % 4000)).toISOString());
    await untilAllCompleted(db.pool);
    const steady = await latenessSince(db.pool, steadyFrom);
    return {
      created,
      plainPerS,
      waiting,
      afterRss,
      idleRss: idle,
      waitingRss,
      firingRss,
      burst,
      steady,
      steadyCreated,
      lateCreations,
    };
  } finally {
    await svc.stop();
    project.remove();
    await db.drop();
  }
}

export const timersBenchmark: Benchmark = {
  name: 'timers',
  timeoutMs: 20 * 60_000,
  description: `${fmtInt(COUNT)} runs each waiting 1-5 s (steady), then ${fmtInt(COUNT)} due within the same 4 s (burst): fire lateness vs the claim interval, memory while they wait`,
  async run() {
    const machine = await describeMachine();
    const r = await measure();
    const target = CLAIM_INTERVAL_MS + TARGET_SLACK_MS;
    const perRunBytes = ((r.waitingRss - r.idleRss) * 1024 * 1024) / Math.max(1, r.waiting);
    const rate = (created: { elapsedMs: number }) => COUNT / (created.elapsedMs / 1000);
    const row = (label: string, l: Awaited<ReturnType<typeof latenessSince>>) => [
      label,
      `${fmtInt(l.fired)} (${fmtInt(l.waited)})`,
      fmtMs(l.p50),
      fmtMs(l.p90),
      fmtMs(l.p99),
      fmtMs(l.max),
      `**${fmtRatio(l.p99 / CLAIM_INTERVAL_MS)}**`,
      l.p99 < target ? 'met' : 'NOT met',
    ];
    const markdown = [
      '## 10. Durable timers (`npm run bench -- timers`)',
      '',
      `${new Date().toISOString()} · ${machine}`,
      '',
      `A two-step workflow (Wait \`until\`, Response), runs created over HTTP with \`?wait=false\`, ${CONCURRENCY} in flight; one service process, ` +
        `SVC_RUN_CLAIM_INTERVAL_MS=${CLAIM_INTERVAL_MS}. Lateness is each timer_fired's commit time minus its fires_at (timers that waited). ` +
        `**Steady**: ${fmtInt(COUNT)} runs, each waiting 1-5 s from its own start, created at a paced ${fmtInt(STEADY_RATE)} runs/s (\`--rate\`; achieved ${fmtInt(rate(r.steadyCreated))} runs/s). ` +
        `**Burst**: ${fmtInt(COUNT)} runs created first (${fmtInt(rate(r.created))} runs/s; without the Wait step ${fmtInt(r.plainPerS)} runs/s), ` +
        `all waiting until a common release time plus 1-5 s, so all ${fmtInt(COUNT)} fall due within 4 s: a capacity test. ${r.lateCreations}`,
      '',
      markdownTable(
        ['phase', 'timers fired (waited)', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'p99 / claim interval', `p99 < ${fmtInt(target)} ms`],
        [row('steady', r.steady), row('burst', r.burst)],
      ),
      '',
      markdownTable(
        ['service RSS (burst phase)', 'MiB'],
        [
          [`idle, after ${CALIBRATION_RUNS} reference runs`, fmtInt(r.idleRss)],
          [`${fmtInt(r.waiting)} runs waiting (at the release time)`, fmtInt(r.waitingRss)],
          ['peak while they fire', fmtInt(r.firingRss)],
          ['3 s after the last fired', fmtInt(r.afterRss)],
        ],
      ),
      '',
      `Memory while ${fmtInt(r.waiting)} runs wait: ${fmtInt(r.waitingRss - r.idleRss)} MiB over idle ` +
        `(${fmtInt(perRunBytes)} bytes per waiting run; no timer or drive is held for a run that waits longer than the claim interval).`,
    ].join('\n');
    return { title: 'timers', markdown };
  },
};
