// The soak (issue 23; `npm run soak`, not in CI): N minutes of mixed load at a fixed rate against the built
// service, per minute memory, error rate, latency per kind and event-loop lag, then a drift verdict.
import { request } from 'node:http';
import os from 'node:os';
import { startCompiledService } from './compiledService.js';
import { bootstrapAdmin, BENCH_ADMIN, requestJson, rssMiB, sleep, writeProject } from './httpSupport.js';
import { createBenchDatabase, describeMachine, fmtInt, fmtMs, markdownTable, recordResult, summarize } from './support.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const MINUTES = Number(flag('minutes') ?? 30);
/** Operations started per second, whatever the answers (open loop). */
const RATE = Number(flag('rate') ?? 20);
const MINUTE_MS = Number(process.env.SOAK_MINUTE_MS ?? 60_000);
/** One cycle of the schedule: each kind's share of the operations. */
const CYCLE = [
  ...['hello', 'approval', 'crud', 'hello', 'follow', 'crud', 'hello', 'decide', 'crud', 'hello'],
  ...['hello', 'approval', 'crud', 'hello', 'follow', 'crud', 'hello', 'decide', 'hello', 'login'],
] as const;
type Kind = 'hello' | 'approval' | 'decide' | 'follow' | 'crud' | 'login';
const KINDS: readonly Kind[] = ['hello', 'approval', 'decide', 'follow', 'crud', 'login'];

const PROJECT = {
  'workflows/hello.yaml': `kind: Workflow
metadata: {name: hello, schema_version: v1, description: "Answers at once (201)."}
spec:
  trigger:
    http: {path: /api/hello, method: POST, public: true}
    input_schema:
      - {name: name, type: string, required: true}
  steps:
    - {id: respond, kind: Response, mapping: {greeting: name}}
`,
  'workflows/approve.yaml': `kind: Workflow
metadata: {name: approve, schema_version: v1, description: "Waits for a decision (202), then answers."}
spec:
  trigger:
    http: {path: /api/approve, method: POST, public: true}
    input_schema:
      - {name: order, type: string, required: true}
  steps:
    - id: review
      kind: HumanInTheLoop
      ui: {title: Approve, instruction: Soak approval., display_context: [order]}
      human_feedback:
        - {name: note, type: string}
      output_key: review
      routes: {approve: done, reject: done, expired: done}
    - {id: done, kind: Response, mapping: {order: order, decision: review.decision}}
`,
  'models/item.yaml': `kind: ModelDefinition
metadata: {name: Item, schema_version: v1, description: "The soak's record."}
spec:
  tablename: items
  datasource: primary
  fields:
    - {name: id, type: uuid, primary_key: true, input: false}
    - {name: name, type: string, required: true}
    - {name: price, type: integer, required: true}
  api:
    crud: [list, read, create, update, delete]
`,
};

interface Minute {
  rssMiB: number;
  heapMiB: number;
  loopLagP99Ms: number;
  /** The machine's 1-minute load average: latency moves with what else runs on this shared machine. */
  loadAverage: number;
  latencies: Record<Kind, number[]>;
  errors: Record<Kind, number>;
}

const newMinute = (): Minute => ({
  rssMiB: NaN,
  heapMiB: NaN,
  loopLagP99Ms: NaN,
  loadAverage: NaN,
  latencies: Object.fromEntries(KINDS.map((k) => [k, []])) as unknown as Record<Kind, number[]>,
  errors: Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<Kind, number>,
});

/** What the operations share: the service, the admin token, runs waiting for a decision, items to edit. */
interface Load {
  url: string;
  token: string;
  pending: { runId: string; decideUrl: string }[];
  /** Records created and not yet updated, and updated ones waiting for their delete: no two operations edit one record at once. */
  items: { fresh: string[]; updated: string[] };
  followers: Set<{ destroy(): void }>;
  counter: number;
  crudCount: number;
}

async function expectStatus(status: number, answer: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const { status: got, body } = await answer;
  if (got !== status) throw new Error(`${what} answered ${got}: ${JSON.stringify(body).slice(0, 200)}`);
  return body;
}

/** Follows a waiting run's events for 2-10 s; answers once the stream's headers arrived. */
function follow(load: Load): Promise<void> {
  const run = load.pending[load.counter % Math.max(1, load.pending.length)];
  if (!run) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const headers = { accept: 'text/event-stream', authorization: `Bearer ${load.token}` };
    const req = request(`${load.url}/api/runs/${run.runId}/events`, { agent: false, headers }, (res) => {
      res.resume();
      if (res.statusCode !== 200) return reject(new Error(`GET /api/runs/{id}/events answered ${res.statusCode}`));
      const held = { destroy: () => req.destroy() };
      load.followers.add(held);
      setTimeout(() => (load.followers.delete(held), req.destroy()), 2000 + (load.counter % 9) * 1000);
      resolve();
    });
    // After the headers, the end of a held stream is ours (destroy): rejecting then changes nothing.
    req.on('error', reject);
    req.end();
  });
}

/** One model operation, in turn: create, read, update, list, delete (of a record updated earlier). */
async function crud(load: Load): Promise<void> {
  const step = load.crudCount++ % 5;
  const base = `${load.url}/models/item/`;
  const { fresh, updated } = load.items;
  const create = async () => {
    const body = await expectStatus(201, requestJson(base, { json: { name: `item-${load.crudCount}`, price: load.crudCount }, token: load.token }), 'create');
    fresh.push(body.id as string);
  };
  if (step === 0 || (step === 1 && fresh.length === 0)) return create();
  if (step === 1) return void (await expectStatus(200, requestJson(`${base}${fresh.at(-1)!}`, { token: load.token }), 'read'));
  // A few records stay in each queue: the newest (read) is updated and deleted only many operations later.
  if (step === 2 && fresh.length > 3) {
    const id = fresh.shift()!;
    await expectStatus(200, requestJson(`${base}${id}`, { method: 'PATCH', json: { price: 1 }, token: load.token }), 'update');
    updated.push(id);
    return;
  }
  if (step === 4 && updated.length > 3) {
    return void (await expectStatus(204, requestJson(`${base}${updated.shift()!}`, { method: 'DELETE', token: load.token }), 'delete'));
  }
  await expectStatus(200, requestJson(`${base}?limit=20`, { token: load.token }), 'list');
}

async function operate(load: Load, kind: Kind): Promise<void> {
  const n = ++load.counter;
  switch (kind) {
    case 'hello':
      await expectStatus(201, requestJson(`${load.url}/api/hello`, { json: { name: `soak-${n}` } }), 'POST /api/hello');
      return;
    case 'approval': {
      const run = await expectStatus(202, requestJson(`${load.url}/api/approve`, { json: { order: `o-${n}` } }), 'POST /api/approve');
      load.pending.push({ runId: run.id as string, decideUrl: run.approval.decide_url as string });
      return;
    }
    case 'decide': {
      // The oldest waiting run, once a dozen wait: followers have runs to follow meanwhile.
      if (load.pending.length < 12) return operate(load, 'approval');
      const run = load.pending.shift()!;
      await expectStatus(
        200,
        requestJson(`${load.url}${run.decideUrl}`, { json: { decision: 'approve', values: { note: 'ok' } }, token: load.token }),
        'decide',
      );
      return;
    }
    case 'follow':
      return follow(load);
    case 'crud':
      return crud(load);
    case 'login': {
      const form = { username: BENCH_ADMIN.email, password: BENCH_ADMIN.password, grant_type: 'password' };
      await expectStatus(200, requestJson(`${load.url}/auth/token`, { form }), 'login');
      return;
    }
  }
}

/** nodejs_heap_size_used_bytes and the event-loop lag p99 since the last scrape (prom-client resets it). */
async function scrape(load: Load): Promise<{ heapMiB: number; loopLagP99Ms: number }> {
  const { body } = await requestJson(`${load.url}/metrics`, { token: load.token });
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(String(body))?.[1] ?? NaN);
  return { heapMiB: value('nodejs_heap_size_used_bytes') / 2 ** 20, loopLagP99Ms: value('nodejs_eventloop_lag_p99_seconds') * 1000 };
}

async function soak(load: Load, pid: number): Promise<Minute[]> {
  const minutes: Minute[] = [];
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  let current = newMinute();
  let next = 0;
  for (let m = 0; m < MINUTES; m++) {
    const minuteEnd = start + (m + 1) * MINUTE_MS;
    while (performance.now() < minuteEnd) {
      await sleep(start + (next * 1000) / RATE - performance.now());
      const kind = CYCLE[next++ % CYCLE.length]!;
      const minute = current;
      const t0 = performance.now();
      const op: Promise<void> = operate(load, kind)
        .then(
          () => void minute.latencies[kind].push(performance.now() - t0),
          (error: unknown) => {
            minute.errors[kind]++;
            if (minute.errors[kind] <= 3) console.error(`  ${kind}: ${(error as Error).message}`);
          },
        )
        .finally(() => inFlight.delete(op));
      inFlight.add(op);
    }
    Object.assign(current, { rssMiB: rssMiB(pid), loadAverage: os.loadavg()[0]! }, await scrape(load));
    minutes.push(current);
    console.error(`  minute ${m + 1}: ${describeMinute(current)}`);
    current = newMinute();
  }
  await Promise.all(inFlight);
  return minutes;
}

function describeMinute(m: Minute): string {
  const all = KINDS.flatMap((k) => m.latencies[k]);
  const errors = KINDS.reduce((n, k) => n + m.errors[k], 0);
  return `RSS ${fmtInt(m.rssMiB)} MiB, heap ${fmtInt(m.heapMiB)} MiB, ${fmtInt(all.length)} ok, ${errors} errors, p99 ${fmtMs(summarize(all).p99)} ms, loop lag p99 ${fmtMs(m.loopLagP99Ms)} ms`;
}

/** First and last window (5 minutes, or a third of a shorter soak): memory, p99 per kind, error rate. */
function driftVerdict(minutes: Minute[]): { table: string; verdict: string } {
  const span = Math.max(1, Math.min(5, Math.floor(minutes.length / 3)));
  const windows = { first: minutes.slice(0, span), last: minutes.slice(-span) };
  const mean = (list: Minute[], pick: (m: Minute) => number) => list.reduce((s, m) => s + pick(m), 0) / list.length;
  const p99 = (list: Minute[], kind: Kind) => summarize(list.flatMap((m) => m.latencies[kind])).p99;
  const errorRate = (list: Minute[]) => {
    const errors = list.reduce((n, m) => n + KINDS.reduce((e, k) => e + m.errors[k], 0), 0);
    const oks = list.reduce((n, m) => n + KINDS.reduce((e, k) => e + m.latencies[k].length, 0), 0);
    return errors / Math.max(1, errors + oks);
  };
  const rows = (['first', 'last'] as const).map((w) => [
    `${w} ${span} min`,
    fmtInt(mean(windows[w], (m) => m.rssMiB)),
    fmtInt(mean(windows[w], (m) => m.heapMiB)),
    `${(errorRate(windows[w]) * 100).toFixed(2)}%`,
    ...KINDS.map((k) => fmtMs(p99(windows[w], k))),
    fmtMs(mean(windows[w], (m) => m.loopLagP99Ms)),
  ]);
  const rssGrowth = mean(windows.last, (m) => m.rssMiB) / mean(windows.first, (m) => m.rssMiB) - 1;
  const slower = KINDS.filter((k) => p99(windows.last, k) > 2 * p99(windows.first, k) && p99(windows.last, k) > 20);
  const problems = [
    rssGrowth > 0.2 ? `RSS grew ${(rssGrowth * 100).toFixed(0)}%` : '',
    slower.length ? `p99 more than doubled for ${slower.join(', ')}` : '',
    errorRate(windows.last) > Math.max(0.001, 2 * errorRate(windows.first)) ? 'more errors' : '',
  ].filter(Boolean);
  const header = ['window', 'RSS MiB', 'heap MiB', 'errors', ...KINDS.map((k) => `${k} p99 ms`), 'loop lag p99 ms'];
  const verdict = problems.length
    ? `**Drift**: ${problems.join('; ')}.`
    : `**No drift** (RSS ${(rssGrowth * 100).toFixed(0)}%, no p99 doubled, no more errors).`;
  return { table: markdownTable(header, rows), verdict };
}

function report(minutes: Minute[], machine: string): string {
  const perMinute = minutes.map((m, i) => {
    const errors = KINDS.reduce((n, k) => n + m.errors[k], 0);
    const oks = KINDS.reduce((n, k) => n + m.latencies[k].length, 0);
    return [
      String(i + 1),
      fmtInt(m.rssMiB),
      fmtInt(m.heapMiB),
      fmtInt(oks),
      `${((errors / Math.max(1, errors + oks)) * 100).toFixed(2)}%`,
      ...KINDS.map((k) => `${fmtMs(summarize(m.latencies[k]).p50)} / ${fmtMs(summarize(m.latencies[k]).p99)}`),
      fmtMs(m.loopLagP99Ms),
      m.loadAverage.toFixed(1),
    ];
  });
  const drift = driftVerdict(minutes);
  return [
    `## Soak: ${MINUTES} minutes of mixed load (\`npm run soak -- --minutes=${MINUTES}\`)`,
    '',
    `${new Date().toISOString()} · ${machine}`,
    '',
    `The built \`svc serve\` (\`bench/compiledService.ts\`, a fresh database) under ${RATE} operations/s started at a fixed pace whatever ` +
      `the answers (open loop), in the cycle ${CYCLE.join(', ')}: \`hello\` a trigger answered 201; \`approval\` a trigger answered ` +
      '202 (a HumanInTheLoop step); `decide` approves the oldest waiting run (POST its `decide_url`, admin token) once a dozen wait; ' +
      "`follow` opens `GET /api/runs/{id}/events` of a waiting run and holds it 2-10 s (latency: to the stream's headers); `crud` " +
      'create, read, update, list and delete (of a record updated earlier) in turn; `login` a password login (`/auth/token`, login throttle on). RSS from /proc, ' +
      'heap used and the event-loop lag p99 (since the previous minute) from `/metrics`; machine load: the 1-minute load average ' +
      '(2 cores; latency drift with a high load is other work on the machine). Latency columns: p50 / p99 ms.',
    '',
    markdownTable(['minute', 'RSS MiB', 'heap MiB', 'ok', 'errors', ...KINDS, 'loop lag p99 ms', 'machine load'], perMinute),
    '',
    drift.table,
    '',
    `${drift.verdict} Thresholds: RSS +20%, a kind's p99 over 2x (and over 20 ms), the error rate over 2x (and over 0.1%).`,
  ].join('\n');
}

async function main(): Promise<void> {
  const machine = await describeMachine();
  const db = await createBenchDatabase('soak', 2);
  const project = writeProject('soak', PROJECT);
  const svc = await startCompiledService('soak', { databaseUrl: db.url, projectDir: project.dir });
  const load: Load = { url: svc.url, token: '', pending: [], items: { fresh: [], updated: [] }, followers: new Set(), counter: 0, crudCount: 0 };
  try {
    load.token = await bootstrapAdmin(svc.url);
    console.error(`soak: ${MINUTES} min at ${RATE} operations/s against pid ${svc.pid}`);
    const minutes = await soak(load, svc.pid);
    const markdown = report(minutes, machine);
    console.log(`\n${markdown}\n`);
    if (!process.argv.includes('--no-record')) await recordResult('soak', markdown);
  } finally {
    for (const follower of load.followers) follower.destroy();
    await svc.stop();
    project.remove();
    await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
