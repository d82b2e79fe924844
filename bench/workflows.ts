// Benchmark 7 (issue 5): the 3-step Functional workflow over HTTP, 201 and 202 answers, side by side with the DBOS peer.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { withDatabase } from '../src/db/pool.js';
import { TERMINAL_STATUSES } from '../src/runs/state.js';
import { BENCH_DIR, createBenchDatabase, describeMachine, fmtInt, fmtMs, fmtRatio, markdownTable, SERVER_URL, type Benchmark } from './support.js';
import {
  adminQuery,
  describeFailures,
  DURATION_S,
  freePort,
  queryOn,
  requestJson,
  runLoad,
  SERVICE_LOG_LEVEL,
  startPeerProcess,
  startServiceProcess,
  WARM_UP_S,
  waitUntilZero,
  warmAndMeasure,
  writeProject,
  type LoadOptions,
  type LoadResult,
} from './httpSupport.js';

const CONNECTIONS = 50;
const BODY = JSON.stringify({ name: 'world', values: [1, 2, 3, 4, 5] });
const TARGET_RATIO = 2;
const REPO = path.join(BENCH_DIR, '..');
const PEER_DIR = process.env.BENCH_DBOS_DIR ?? path.join(REPO, '..', 'shared', 'peers', 'dbos');
const PEER_DATABASE = 'dbos_bench';

interface Target {
  sync: LoadResult;
  async: LoadResult;
  /** Runs completed per second over the 202 load plus the drain after it. */
  completedPerS: number;
  drainMs: number;
}

/** Hooks that differ between svc and the peer: where to send, how to count runs. */
interface Subject {
  syncUrl: string;
  asyncUrl: string;
  pending(): Promise<number>;
  completed(): Promise<number>;
}

async function measure(subject: Subject): Promise<Target> {
  const post = (url: string): LoadOptions => ({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, connections: CONNECTIONS });
  const sync = await warmAndMeasure(post(subject.syncUrl));
  console.error(`    201: ${fmtInt(sync.rps)} req/s, p50 ${fmtMs(sync.p50)} ms, p99 ${fmtMs(sync.p99)} ms (${describeFailures(sync)})`);
  if (WARM_UP_S > 0) await runLoad({ ...post(subject.asyncUrl), durationS: WARM_UP_S });
  await waitUntilZero(subject.pending);
  const before = await subject.completed();
  const started = performance.now();
  const accepted = await runLoad(post(subject.asyncUrl));
  const loadEnded = performance.now();
  const drainMs = await waitUntilZero(subject.pending);
  const completed = (await subject.completed()) - before;
  const completedPerS = completed / ((performance.now() - started) / 1000);
  console.error(
    `    202: ${fmtInt(accepted.rps)} req/s, p99 ${fmtMs(accepted.p99)} ms (${describeFailures(accepted)}); ` +
      `${fmtInt(completedPerS)} completed/s, drain ${fmtInt(drainMs)} ms after ${fmtInt(loadEnded - started)} ms of load`,
  );
  return { sync, async: accepted, completedPerS, drainMs };
}

/** The project's own benchmark workflow and its three runners, in a project of their own. */
function helloProject() {
  const read = (relative: string) => readFileSync(path.join(REPO, relative), 'utf8');
  return writeProject('workflows', {
    'workflows/hello.yaml': read('workflows/hello.yaml'),
    'nodes/normalize_name.ts': read('nodes/normalize_name.ts'),
    'nodes/greet.ts': read('nodes/greet.ts'),
    'nodes/stamp.ts': read('nodes/stamp.ts'),
  });
}

async function measureSvc(): Promise<Target> {
  const db = await createBenchDatabase('workflows', 2);
  const project = helloProject();
  const svc = await startServiceProcess('workflows', { databaseUrl: db.url, projectDir: project.dir });
  try {
    const sample = await requestJson(`${svc.url}/api/hello`, { json: JSON.parse(BODY) });
    if (sample.status !== 201 || sample.body.greeting !== 'Hello, World!' || sample.body.total !== 15) {
      throw new Error(`POST /api/hello answered ${sample.status}: ${JSON.stringify(sample.body)}`);
    }
    const queued = await requestJson(`${svc.url}/api/hello?wait=false`, { json: JSON.parse(BODY) });
    if (queued.status !== 202) throw new Error(`POST /api/hello?wait=false answered ${queued.status}: ${JSON.stringify(queued.body)}`);
    await db.pool.query('CHECKPOINT');
    const count = async (where: string, params: unknown[]) =>
      Number((await db.pool.query<{ n: string }>(`SELECT count(*) AS n FROM svc_runs WHERE ${where}`, params)).rows[0]!.n);
    console.error('  svc:');
    return await measure({
      syncUrl: `${svc.url}/api/hello`,
      asyncUrl: `${svc.url}/api/hello?wait=false`,
      pending: () => count('status <> ALL($1)', [TERMINAL_STATUSES]),
      completed: () => count("status = 'completed'", []),
    });
  } finally {
    await svc.stop();
    project.remove();
    await db.drop();
  }
}

/** Installs the peer's packages (as peers/run.sh does) when they are missing; answers why it could not, if so. */
function ensurePeerInstalled(): string | undefined {
  if (!existsSync(path.join(PEER_DIR, 'server.mjs'))) return `no DBOS peer at ${PEER_DIR}`;
  if (existsSync(path.join(PEER_DIR, 'node_modules', '@dbos-inc', 'dbos-sdk'))) return undefined;
  console.error(`  installing the DBOS peer's packages (npm ci in ${PEER_DIR})`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PEER_DIR, stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 });
  if (result.status !== 0)
    return `npm ci in ${PEER_DIR} failed (${result.status ?? result.signal}): ${String(result.stderr).trim().split('\n').slice(-3).join(' ')}`;
  return undefined;
}

async function measurePeer(): Promise<{ target?: Target; error?: string; version?: string }> {
  const installError = ensurePeerInstalled();
  if (installError) return { error: installError };
  const version = (JSON.parse(readFileSync(path.join(PEER_DIR, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json'), 'utf8')) as { version: string })
    .version;
  const databaseUrl = withDatabase(SERVER_URL, PEER_DATABASE);
  // DBOS creates and migrates its system database at launch.
  await adminQuery(`DROP DATABASE IF EXISTS ${PEER_DATABASE} WITH (FORCE)`);
  await adminQuery('CHECKPOINT');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let peer;
  try {
    peer = await startPeerProcess('dbos', PEER_DIR, 'server.mjs', { PORT: String(port), DBOS_DB_URL: databaseUrl }, url);
  } catch (error) {
    return { error: `the DBOS peer did not start: ${(error as Error).message.split('\n')[0]}`, version };
  }
  try {
    const sample = await requestJson(`${url}/api/hello`, { json: JSON.parse(BODY) });
    if (sample.status !== 201 || sample.body.name !== 'WORLD' || sample.body.sum !== 15) {
      return { error: `the DBOS peer answered ${sample.status}: ${JSON.stringify(sample.body).slice(0, 200)}`, version };
    }
    const count = async (where: string) =>
      Number((await queryOn<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM dbos.workflow_status WHERE ${where}`))[0]!.n);
    console.error(`  DBOS ${version}:`);
    const target = await measure({
      syncUrl: `${url}/api/hello`,
      asyncUrl: `${url}/api/hello-async`,
      pending: () => count("status NOT IN ('SUCCESS', 'ERROR', 'CANCELLED')"),
      completed: () => count("status = 'SUCCESS'"),
    });
    return { target, version };
  } finally {
    await peer.stop();
    await adminQuery(`DROP DATABASE IF EXISTS ${PEER_DATABASE} WITH (FORCE)`).catch(() => undefined);
  }
}

export const workflowsBenchmark: Benchmark = {
  name: 'workflows',
  description: `3-step Functional workflow over HTTP at ${CONNECTIONS} connections, 201 and 202 answers, vs the DBOS peer`,
  async run() {
    const svc = await measureSvc();
    const peer = await measurePeer();
    if (peer.error) console.error(`  DBOS peer: ${peer.error}`);
    return { title: 'workflows', markdown: await report(svc, peer) };
  },
};

async function report(svc: Target, peer: { target?: Target; error?: string; version?: string }): Promise<string> {
  const dbos = peer.target;
  const row = (label: string, r: LoadResult, extra: string) => [
    label,
    `**${fmtInt(r.rps)}**`,
    fmtMs(r.p50),
    fmtMs(r.p99),
    fmtMs(r.max),
    describeFailures(r),
    extra,
  ];
  const rows = [
    row('svc `POST /api/hello` (runs, waits, 201)', svc.sync, '-'),
    ...(dbos ? [row(`DBOS ${peer.version} \`POST /api/hello\` (201)`, dbos.sync, '-')] : []),
    row('svc `POST /api/hello?wait=false` (202)', svc.async, `${fmtInt(svc.completedPerS)} (drain ${fmtInt(svc.drainMs)} ms)`),
    ...(dbos
      ? [row(`DBOS ${peer.version} \`POST /api/hello-async\` (202)`, dbos.async, `${fmtInt(dbos.completedPerS)} (drain ${fmtInt(dbos.drainMs)} ms)`)]
      : []),
  ];
  const verdict = (ours: number, theirs: number, what: string) => {
    const ratio = ours / theirs;
    return `${what}: **${fmtRatio(ratio)}x** the peer (target >= ${TARGET_RATIO}x: ${ratio >= TARGET_RATIO ? 'met' : 'missed'})`;
  };
  return [
    '## 7. Workflow runs over HTTP, side by side with DBOS (`npm run bench -- workflows`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `svc runs \`workflows/hello.yaml\` (three Functional steps, \`normalize_name\`, \`greet\`, \`stamp\`, then a Response step) in a child ` +
      `process (\`bench/serviceProcess.ts\`: \`startService\`, log level ${SERVICE_LOG_LEVEL}, a project holding only that workflow and its ` +
      'runners, a fresh database). The peer is `../shared/peers/dbos/server.mjs` (express + `@dbos-inc/dbos-sdk`, three registered steps, ' +
      `its own database \`${PEER_DATABASE}\` dropped before it starts, DBOS\'s default 10-connection pool and log level), started as a child ` +
      `process after svc has stopped. Body \`${BODY}\`; autocannon in the parent, ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ` +
      `${DURATION_S} s measured, one run per job, in the order of the table rows by server (svc 201, svc 202, then DBOS 201, DBOS 202). ` +
      'For the 202 jobs the warm-up\'s runs are drained first, and "completed/s" counts runs that reached completed (svc: `svc_runs`; ' +
      'DBOS: `dbos.workflow_status` SUCCESS) from the start of the measured load until nothing is pending, divided by that time.',
    '',
    markdownTable(['job', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'failures', 'completed runs/s (202)'], rows),
    '',
    dbos
      ? `${verdict(svc.sync.rps, dbos.sync.rps, 'Runs/s with 201 answers')}; ${verdict(svc.async.rps, dbos.async.rps, '202 answers/s')}; ` +
        `completed runs/s behind the 202 answers: ${fmtRatio(svc.completedPerS / dbos.completedPerS)}x.`
      : `**The DBOS peer was not measured: ${peer.error}.** No peer figures and no ratio in this run.`,
  ].join('\n');
}
