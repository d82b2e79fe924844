// Fault injection on readers: followers on instance A of runs that instance B executes, while every
// LISTEN connection is killed again and again, and while a write transaction is held open. The gated
// log stream and each run's stream deliver every event, in order, without gaps or repeats; runs go on
// while the horizon is held; and the invariants hold.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, eventually } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { SseReader } from '../support/sse.js';
import { createSideEffectTables, DURABLE_PROJECT, fireRun, openPool } from '../durability/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { TriggerLoad } from './load.js';
import { PROFILE } from './profile.js';

describe(`faults (${PROFILE.name}): followers while wake-ups and the horizon fail`, function () {
  this.timeout(PROFILE.settleMs + 120_000);
  let db: pg.Pool;
  let databaseUrl: string;
  let a: ServiceProcess;
  let b: ServiceProcess;
  let token: string;
  const acked = new Acknowledged();
  const diagnostics = () => [a, b].map((s) => s.output.slice(-2000)).join('\n---\n');

  before(async () => {
    databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    db.on('error', () => undefined);
    await createSideEffectTables(db);
    [a, b] = await Promise.all([ServiceProcess.start(databaseUrl, DURABLE_PROJECT), ServiceProcess.start(databaseUrl, DURABLE_PROJECT)]);
    ({ token } = await bootstrapAdmin(a.url));
  });
  after(async () => {
    await killAllServices();
    await db?.end();
  });

  /** Runs fired on B and followed on A (their SSE streams end with the run): answers when every stream was read and checked. */
  async function followRunsOnA(count: number): Promise<{ done: Promise<void[]> }> {
    const ids = await Promise.all(Array.from({ length: count }, (_, i) => fireRun(b.url, token, { sleep_ms: 600, tag: `followed-${Date.now()}-${i}` })));
    const readers = await Promise.all(
      ids.map(async (id) => {
        acked.runIds.add(id);
        const reader = await SseReader.open(`${a.url}/api/runs/${id}/events`, { token });
        expect(reader.status, reader.text).to.equal(200);
        return { id, reader };
      }),
    );
    return {
      done: Promise.all(
        readers.map(async ({ id, reader }) => {
          const frames = (await reader.readToEnd(PROFILE.settleMs)).filter((f) => f.data?.seq !== undefined);
          const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1`, [`run-${id}`]);
          expect(
            frames.map((f) => f.data.seq),
            `run ${id} as followed on A`,
          ).to.deep.equal(Array.from({ length: rows[0]!.n }, (_, i) => i + 1));
          reader.close();
        }),
      ),
    };
  }

  /** Reads the gated run log on A until it has every run event the database holds, then compares the order. */
  async function expectLogFollowed(reader: SseReader): Promise<number> {
    const positions: number[] = [];
    const { rows } = await db.query<{ p: string }>(
      `SELECT global_position AS p FROM events WHERE stream_type = 'run' ORDER BY transaction_id, global_position`,
    );
    const expected = rows.map((r) => Number(r.p));
    const caught = await eventually(
      async () => {
        const frame = await reader.next(PROFILE.settleMs).catch(() => undefined);
        if (frame?.data?.global_position !== undefined) positions.push(Number(frame.data.global_position));
        return positions.length >= expected.length || frame === undefined;
      },
      PROFILE.settleMs,
      0,
    );
    expect(caught.ok, `the log follower has ${positions.length} of ${expected.length} events`).to.equal(true);
    expect(positions.slice(0, expected.length), 'the gated log as followed on A').to.deep.equal(expected);
    for (const p of positions) acked.positions.add(p);
    return positions.length;
  }

  it(`every LISTEN connection killed ${PROFILE.rounds} times under load: followers on A get every event of B's runs, in order`, async () => {
    const log = await SseReader.open(`${a.url}/admin/events/stream?stream_type=run`, { token });
    expect(log.status, log.text).to.equal(200);
    const load = new TriggerLoad(() => [b.url], token, PROFILE.clients);
    const followed = await followRunsOnA(5);
    let killed = 0;
    for (let round = 0; round < PROFILE.rounds; round++) {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'svc-listen' AND datname = current_database()`,
      );
      killed += rows[0]!.n;
      await sleep(200 + Math.random() * 200);
    }
    await load.stop();
    await followed.done;
    const byStatus = await load.check(db, acked);
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    const followedEvents = await expectLogFollowed(log);
    log.close();
    expect(killed, 'LISTEN connections killed').to.be.at.least(PROFILE.rounds);
    console.log(`      ${killed} LISTEN connections killed; answers ${JSON.stringify(byStatus)}; ${runs} runs; ${followedEvents} events followed`);
  });

  it(`a write transaction held open ${PROFILE.heldMs} ms under load: runs go on meanwhile, the gated follower skips nothing after`, async () => {
    const log = await SseReader.open(`${a.url}/admin/events/stream?stream_type=run`, { token });
    expect(log.status, log.text).to.equal(200);
    const held = new pg.Client({ connectionString: databaseUrl });
    await held.connect();
    try {
      await held.query('BEGIN');
      // An xid below every append that follows: the gate holds gated readers at it until it ends.
      await held.query(`SELECT pg_current_xact_id()`);
      const load = new TriggerLoad(() => [a.url, b.url], token, PROFILE.clients);
      const followed = await followRunsOnA(5);
      await sleep(PROFILE.heldMs);
      await load.stop();
      // Run drives and run streams are not gated: they finished while the transaction stayed open.
      await followed.done;
      const byStatus = await load.check(db, acked);
      const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
      await held.query('COMMIT');
      const followedEvents = await expectLogFollowed(log);
      console.log(`      answers ${JSON.stringify(byStatus)}; ${runs} runs ended while held; ${followedEvents} events followed after`);
    } finally {
      log.close();
      await held.end();
    }
  });
});
