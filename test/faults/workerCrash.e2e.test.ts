// Fault injection: workers SIGKILLed mid-step with many slow runs in flight over two processes, and
// mid-commit under a tight loop of triggers; a fresh worker takes over, and the invariants hold.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, eventually } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { attemptsOf, createSideEffectTables, DURABLE_PROJECT, fireRun, openPool } from '../durability/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { TriggerLoad } from './load.js';
import { PROFILE } from './profile.js';

describe(`faults (${PROFILE.name}): workers killed with runs in flight`, function () {
  this.timeout(PROFILE.settleMs + 120_000);
  let db: pg.Pool;
  let databaseUrl: string;
  const services: ServiceProcess[] = [];
  const diagnostics = () => services.map((s) => s.output.slice(-2000)).join('\n---\n');

  beforeEach(async () => {
    databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    await createSideEffectTables(db);
    services.length = 0;
    services.push(await ServiceProcess.start(databaseUrl, DURABLE_PROJECT), await ServiceProcess.start(databaseUrl, DURABLE_PROJECT));
  });
  afterEach(async () => {
    await killAllServices();
    await db.end();
  });

  it(`SIGKILL mid-step with ${PROFILE.runsInFlight} slow runs over two processes: the survivor finishes them all`, async () => {
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const { token } = await bootstrapAdmin(a.url);
    const acked = new Acknowledged();
    const ids = await Promise.all(
      Array.from({ length: PROFILE.runsInFlight }, (_, i) =>
        fireRun(i % 2 === 0 ? a.url : b.url, token, { sleep_ms: 150 + ((i * 37) % 150), tag: `slow-${i}` }),
      ),
    );
    for (const id of ids) acked.runIds.add(id);
    const inFlight = await eventually(async () => (await attemptsOf(db)).length >= PROFILE.runsInFlight, 20_000, 10);
    expect(inFlight.ok, diagnostics()).to.equal(true);
    await a.kill('SIGKILL');
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM svc_runs WHERE status <> 'completed'`);
    expect(rows[0]!.n, 'the kill came too late').to.be.greaterThan(0);
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const { rows: byPid } = await db.query<{ pid: number }>('SELECT DISTINCT pid FROM durable_attempts');
    expect(byPid.map((r) => r.pid)).to.include(b.pid);
    console.log(`      ${rows[0]!.n} of ${runs} runs unfinished at the kill`);
  });

  it(`SIGKILL mid-commit, ${PROFILE.commitKills} times, under a tight loop of triggers: every acknowledged run completes once`, async () => {
    const { token } = await bootstrapAdmin(services[0]!.url);
    const acked = new Acknowledged();
    const load = new TriggerLoad(() => services.filter((s) => s.isRunning).map((s) => s.url), token, PROFILE.clients, 5);
    for (let kill = 0; kill < PROFILE.commitKills; kill++) {
      const before = load.acknowledged;
      const going = await eventually(async () => load.acknowledged >= before + 15, 20_000, 5);
      expect(going.ok, diagnostics()).to.equal(true);
      const victim = services[kill % services.length]!;
      await victim.kill('SIGKILL');
      await sleep(100);
      services[kill % services.length] = await ServiceProcess.start(databaseUrl, DURABLE_PROJECT);
    }
    await load.stop();
    const byStatus = await load.check(db, acked);
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    console.log(`      answers ${JSON.stringify(byStatus)}, ${load.unanswered.length} cut off by a kill; ${runs} runs, all ended`);
  });
});
