// Fault injection on clients: streaming triggers, run followers and log followers that hang up
// mid-stream, again and again. Every run a stream announced completes, the service's SSE gauge, open
// file descriptors and database backends come back down (nothing leaked), and the invariants hold.
import { readdirSync } from 'node:fs';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { parseScrape } from '../support/prometheus.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { SseReader } from '../support/sse.js';
import { createSideEffectTables, DURABLE_PROJECT, fireRun, openPool } from '../durability/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { PROFILE } from './profile.js';

const POOL_SIZE = 10;

function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

describe(`faults (${PROFILE.name}): clients that disconnect mid-stream`, function () {
  this.timeout(PROFILE.settleMs + 120_000);
  let db: pg.Pool;
  let service: ServiceProcess;
  let token: string;
  const acked = new Acknowledged();
  const diagnostics = () => service.output.slice(-3000);

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    await createSideEffectTables(db);
    service = await ServiceProcess.start(databaseUrl, DURABLE_PROJECT, { SVC_DB_POOL_SIZE: String(POOL_SIZE) });
    ({ token } = await bootstrapAdmin(service.url));
  });
  after(async () => {
    await killAllServices();
    await db?.end();
  });

  async function sseGauge(): Promise<number> {
    const scrape = await call(service.url, 'GET', '/metrics', { token });
    expect(scrape.status).to.equal(200);
    return parseScrape(scrape.body as string).value('svc_sse_connections');
  }

  /** One of each stream, hung up after its first frame; answers the run the streaming trigger started. */
  async function hangUpRound(round: number): Promise<string> {
    const trigger = await SseReader.open(`${service.url}/api/durable`, { token, method: 'POST', json: { sleep_ms: 100, tag: `hangup-${round}` } });
    expect(trigger.status, trigger.text).to.equal(200);
    const runId = trigger.headers.get('x-svc-run-id');
    expect(runId, 'the streaming trigger names its run').to.be.a('string');
    await trigger.next(10_000);
    trigger.close();
    const other = await fireRun(service.url, token, { sleep_ms: 100, tag: `followed-${round}` });
    acked.runIds.add(other);
    for (const url of [`${service.url}/api/runs/${other}/events`, `${service.url}/admin/events/stream?stream_type=run`]) {
      const reader = await SseReader.open(url, { token });
      expect(reader.status, reader.text).to.equal(200);
      await reader.next(10_000);
      reader.close();
    }
    return runId!;
  }

  it(`${PROFILE.rounds} rounds of streams hung up after their first frame: the runs complete, nothing is left open`, async () => {
    await hangUpRound(-1);
    await eventually(async () => (await sseGauge()) === 0, 10_000, 50);
    const filesBefore = openFiles(service.pid);
    for (let round = 0; round < PROFILE.rounds; round++) acked.runIds.add(await hangUpRound(round));
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const closed = await eventually(async () => (await sseGauge()) === 0, 10_000, 50);
    expect(closed.ok, 'svc_sse_connections back to 0').to.equal(true);
    const files = await eventually(async () => openFiles(service.pid) <= filesBefore + 5, 15_000, 100);
    expect(files.ok, `open files: ${openFiles(service.pid)}, ${filesBefore} before`).to.equal(true);
    const { rows } = await db.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'svc%' GROUP BY state`,
    );
    const byState = Object.fromEntries(rows.map((r) => [r.state, r.n]));
    expect(byState['idle in transaction'] ?? 0, `backends ${JSON.stringify(byState)}`).to.equal(0);
    expect(
      rows.reduce((n, r) => n + r.n, 0),
      `backends ${JSON.stringify(byState)}`,
      // The pool, the LISTEN connection and /health's own.
    ).to.be.at.most(POOL_SIZE + 2);
    // The pool is whole: as many requests at once as it has connections all answer.
    const answers = await Promise.all(Array.from({ length: POOL_SIZE * 2 }, () => call(service.url, 'GET', `/api/runs?limit=1`, { token })));
    expect(answers.map((r) => r.status)).to.deep.equal(answers.map(() => 200));
    console.log(`      ${runs} runs ended; open files ${openFiles(service.pid)} (${filesBefore} before); backends ${JSON.stringify(byState)}`);
  });
});
