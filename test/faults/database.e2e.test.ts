// Fault injection: the database under two working services goes bad under load. Its backends are
// terminated again and again, then it refuses every new connection for a while (ALLOW_CONNECTIONS
// false, the sessions it had terminated): answers are 201/202 or 503 in the error shape, /health says
// so and recovers by itself, and the invariants hold afterwards.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase, testServerUrl } from '../support/db.js';
import { bootstrapAdmin, eventually } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createSideEffectTables, DURABLE_PROJECT, openPool } from '../durability/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { TriggerLoad } from './load.js';
import { PROFILE } from './profile.js';

/** The services' own backends (the checker's pool is left alone). */
const TERMINATE = `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
                    WHERE datname = $1 AND application_name LIKE 'svc%' AND pid <> pg_backend_pid()`;

async function healthOf(url: string): Promise<number> {
  return fetch(`${url}/health`).then(
    (r) => r.status,
    () => 0,
  );
}

describe(`faults (${PROFILE.name}): the database fails under load`, function () {
  this.timeout(PROFILE.settleMs + 120_000);
  let db: pg.Pool;
  let admin: pg.Client;
  let database: string;
  let services: ServiceProcess[];
  let token: string;
  const acked = new Acknowledged();
  const diagnostics = () => services.map((s) => s.output.slice(-2000)).join('\n---\n');

  before(async () => {
    const databaseUrl = await createTestDatabase();
    database = new URL(databaseUrl).pathname.slice(1);
    db = openPool(databaseUrl);
    db.on('error', () => undefined);
    await createSideEffectTables(db);
    admin = new pg.Client({ connectionString: testServerUrl() });
    await admin.connect();
    services = [await ServiceProcess.start(databaseUrl, DURABLE_PROJECT), await ServiceProcess.start(databaseUrl, DURABLE_PROJECT)];
    ({ token } = await bootstrapAdmin(services[0]!.url));
  });
  after(async () => {
    await admin?.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await killAllServices();
    await admin?.end();
    await db?.end();
  });

  function startLoad(): TriggerLoad {
    return new TriggerLoad(() => services.map((s) => s.url), token, PROFILE.clients);
  }

  async function expectRecovered(load: TriggerLoad): Promise<void> {
    const before = load.answers.filter((a) => a.status === 201).length;
    const back = await eventually(async () => load.answers.filter((a) => a.status === 201).length >= before + 10, 30_000, 50);
    expect(back.ok, `runs complete again after the fault:\n${diagnostics()}`).to.equal(true);
    await load.stop();
    for (const service of services) expect(service.isRunning, `a service died:\n${service.output}`).to.equal(true);
  }

  it(`backends terminated ${PROFILE.rounds} times under load: nothing acknowledged is lost, every run ends once`, async () => {
    const load = startLoad();
    await eventually(async () => load.acknowledged >= 20, 20_000, 20);
    let terminated = 0;
    for (let round = 0; round < PROFILE.rounds; round++) {
      terminated += (await admin.query<{ n: number }>(TERMINATE, [database])).rows[0]!.n;
      await sleep(150 + Math.random() * 150);
    }
    await expectRecovered(load);
    expect(terminated, 'backends terminated').to.be.greaterThan(PROFILE.rounds);
    const byStatus = await load.check(db, acked);
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    console.log(`      ${terminated} backends terminated; answers ${JSON.stringify(byStatus)}; ${runs} runs, all ended`);
  });

  it(`the database refuses connections for ${PROFILE.refusalMs} ms: 503 UNAVAILABLE meanwhile, then runs resume by themselves`, async () => {
    const load = startLoad();
    await eventually(async () => load.acknowledged >= 20, 20_000, 20);
    const answered = load.answers.length;
    await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS false`);
    try {
      await admin.query(TERMINATE, [database]);
      const down = await eventually(async () => (await Promise.all(services.map((s) => healthOf(s.url)))).every((s) => s === 503), 10_000, 50);
      expect(down.ok, '/health says 503 while the database refuses').to.equal(true);
      await sleep(PROFILE.refusalMs);
    } finally {
      await admin.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS true`);
    }
    const up = await eventually(async () => (await Promise.all(services.map((s) => healthOf(s.url)))).every((s) => s === 200), 30_000, 100);
    expect(up.ok, `/health is ok again:\n${diagnostics()}`).to.equal(true);
    await expectRecovered(load);
    expect(load.answers.slice(answered).filter((a) => a.status === 503).length, 'the refusal was seen').to.be.greaterThan(0);
    const byStatus = await load.check(db, acked);
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    console.log(`      answers ${JSON.stringify(byStatus)}; ${runs} runs, all ended`);
  });
});
