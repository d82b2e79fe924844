// Benchmark 5 (issue 3): authenticated GET /auth/me against GET /health, and /health latency while bcrypt logins run.
import { createBenchDatabase, describeMachine, fmtInt, fmtMs, fmtRatio, markdownTable, summarize, type Benchmark } from './support.js';
import {
  BENCH_ADMIN,
  bootstrapAdmin,
  describeFailures,
  DURATION_S,
  LOAD_HEADER,
  loadRow,
  meanLoad,
  requestJson,
  runLoad,
  SERVICE_LOG_LEVEL,
  sleep,
  startServiceProcess,
  WARM_UP_S,
  warmAndMeasure,
  writeProject,
  type LoadResult,
} from './httpSupport.js';

const CONNECTIONS = 50;
const LOGINS_IN_FLIGHT = 20;
/** /health during the login phases: a fixed rate, so its latency is the service's, not a queue of 50. */
const HEALTH_RATE = Number(process.env.BENCH_AUTH_HEALTH_RATE ?? 500);
const HEALTH_RATE_CONNECTIONS = 10;
const TARGET_RATIO = 0.7;
const TARGET_HEALTH_P99_MS = 20;

interface LoginLoad {
  count: number;
  failed: number;
  perSecond: number;
  p50: number;
  p99: number;
}

/** `LOGINS_IN_FLIGHT` password logins in a closed loop until `until` settles; answers once the last one is back. */
async function runLogins(baseUrl: string, until: Promise<unknown>): Promise<LoginLoad> {
  let isDone = false;
  void until.then(() => (isDone = true));
  const latencies: number[] = [];
  let failed = 0;
  const started = performance.now();
  const worker = async () => {
    while (!isDone) {
      const t0 = performance.now();
      const result = await requestJson(`${baseUrl}/auth/token`, {
        form: { username: BENCH_ADMIN.email, password: BENCH_ADMIN.password, grant_type: 'password' },
      }).catch(() => ({ status: 0 }));
      if (result.status === 200) latencies.push(performance.now() - t0);
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: LOGINS_IN_FLIGHT }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  const summary = summarize(latencies);
  return { count: latencies.length, failed, perSecond: latencies.length / elapsedS, p50: summary.p50, p99: summary.p99 };
}

export const authBenchmark: Benchmark = {
  name: 'auth',
  description: `GET /auth/me vs GET /health at ${CONNECTIONS} connections; /health p99 with ${LOGINS_IN_FLIGHT} bcrypt logins in flight`,
  async run() {
    const db = await createBenchDatabase('auth', 2);
    const project = writeProject('auth', {});
    // The logins measure bcrypt's cost under load: the login throttle (docs/auth.md) would answer
    // most of them 429 from one loopback address.
    const svc = await startServiceProcess('auth', { databaseUrl: db.url, projectDir: project.dir, env: { SVC_LOGIN_THROTTLE: 'off' } });
    try {
      const token = await bootstrapAdmin(svc.url);
      const me = await requestJson(`${svc.url}/auth/me`, { token });
      if (me.status !== 200) throw new Error(`GET /auth/me answered ${me.status}`);
      const health = { url: `${svc.url}/health`, connections: CONNECTIONS };
      const authMe = { url: `${svc.url}/auth/me`, connections: CONNECTIONS, headers: { authorization: `Bearer ${token}` } };

      // Two rounds in alternating order: neither job always runs first.
      const healthRuns: LoadResult[] = [];
      const meRuns: LoadResult[] = [];
      for (const order of [
        ['health', 'me'],
        ['me', 'health'],
      ] as const) {
        for (const job of order) {
          await db.pool.query('CHECKPOINT');
          const result = await warmAndMeasure(job === 'health' ? health : authMe);
          (job === 'health' ? healthRuns : meRuns).push(result);
          console.error(`  ${job}: ${fmtInt(result.rps)} req/s, p99 ${fmtMs(result.p99)} ms (${describeFailures(result)})`);
        }
      }

      const rated = { url: `${svc.url}/health`, connections: HEALTH_RATE_CONNECTIONS, overallRate: HEALTH_RATE };
      await runLoad({ ...rated, durationS: WARM_UP_S });
      const quiet = await runLoad(rated);
      console.error(`  /health at ${HEALTH_RATE}/s alone: p99 ${fmtMs(quiet.p99)} ms`);
      // Logins start first so that the measured window sees them all in flight.
      let endLogins!: () => void;
      const loginsDone = new Promise<void>((resolve) => (endLogins = resolve));
      const logins = runLogins(svc.url, loginsDone);
      await sleep(1000);
      const busy = await runLoad(rated);
      endLogins();
      const loginLoad = await logins;
      console.error(`  /health at ${HEALTH_RATE}/s with logins: p99 ${fmtMs(busy.p99)} ms; ${fmtInt(loginLoad.count)} logins`);
      return { title: 'auth', markdown: await report(healthRuns, meRuns, quiet, busy, loginLoad) };
    } finally {
      await svc.stop();
      project.remove();
      await db.drop();
    }
  },
};

async function report(healthRuns: LoadResult[], meRuns: LoadResult[], quiet: LoadResult, busy: LoadResult, logins: LoginLoad): Promise<string> {
  const health = meanLoad(healthRuns);
  const me = meanLoad(meRuns);
  const ratio = me.rps / health.rps;
  const perRound = meRuns.map((r, i) => fmtRatio(r.rps / healthRuns[i]!.rps)).join(', ');
  const isP99Met = busy.p99 < TARGET_HEALTH_P99_MS && busy.non2xx + busy.errors === 0;
  return [
    '## 5. Authentication: `GET /auth/me` and logins under load (`npm run bench -- auth`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `svc runs in a child process (\`bench/serviceProcess.ts\`: \`startService\`, log level ${SERVICE_LOG_LEVEL}, login throttle off, an ephemeral Ed25519 key, ` +
      `empty project, a fresh database) and autocannon in the parent, both on loopback. \`GET /auth/me\` carries the bootstrapped ` +
      "admin's bearer token (the whole verification pipeline, no database read); `GET /health` is the same server's unauthenticated " +
      `route (one \`SELECT 1\`). ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${DURATION_S} s measured, two rounds in ` +
      'alternating order; req/s, p50 and p99 are the means of the rounds, max the worst.',
    '',
    markdownTable(LOAD_HEADER, [loadRow('`GET /auth/me` (bearer token)', me), loadRow('reference: `GET /health` (no token)', health)]),
    '',
    `**Ratio /auth/me / /health: ${fmtRatio(ratio)}** (per round: ${perRound}). Target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'missed'}.`,
    '',
    `Then \`GET /health\` at a fixed ${fmtInt(HEALTH_RATE)} requests/s over ${HEALTH_RATE_CONNECTIONS} connections (open loop, so its ` +
      `latency is not a queue of ${CONNECTIONS}) for ${DURATION_S} s, alone and with ${LOGINS_IN_FLIGHT} password logins ` +
      '(`POST /auth/token`, bcrypt cost 12) kept in flight from the parent the whole time.',
    '',
    markdownTable(
      ['job', '/health p50 ms', '/health p99 ms', '/health max ms', '/health failures', 'logins'],
      [
        ['`/health` alone', fmtMs(quiet.p50), fmtMs(quiet.p99), fmtMs(quiet.max), describeFailures(quiet), '-'],
        [
          `\`/health\` with ${LOGINS_IN_FLIGHT} logins in flight`,
          fmtMs(busy.p50),
          `**${fmtMs(busy.p99)}**`,
          fmtMs(busy.max),
          describeFailures(busy),
          `${fmtInt(logins.count)} (${logins.perSecond.toFixed(1)}/s, p50 ${fmtMs(logins.p50)} ms, p99 ${fmtMs(logins.p99)} ms${logins.failed ? `, ${logins.failed} failed` : ''})`,
        ],
      ],
    ),
    '',
    `**/health p99 with logins: ${fmtMs(busy.p99)} ms** (without: ${fmtMs(quiet.p99)} ms). Target < ${TARGET_HEALTH_P99_MS} ms: ${isP99Met ? 'met' : 'missed'}. ` +
      'autocannon records latencies in whole milliseconds.',
  ].join('\n');
}
