// The gate statement (followers, the horizon monitor, audit checkpoints look at it several times a
// second): found through the transaction-order index on a large log, never by scanning it, and
// right about events committed behind a transaction still running.
import { expect } from 'chai';
import pg from 'pg';
import { GATE_SQL, selectGate } from '../../src/eventstore/sql.js';
import { createTestDatabase } from '../support/db.js';
import { planNodes } from '../support/plans.js';
import { eventually } from '../support/http.js';

const insertEvent = (db: pg.Pool | pg.PoolClient, stream: string) =>
  db.query(`INSERT INTO events (stream_id, stream_type, stream_position, type, data) VALUES ($1, 'gate', 1, 'noted', '{}')`, [stream]);

describe('the gate: xmin and whether committed events wait behind it', function () {
  this.timeout(60_000);
  let db: pg.Pool;

  before(async () => {
    db = new pg.Pool({ connectionString: await createTestDatabase(), max: 3 });
    // 1,000 transactions of 50 events, as a log is written (one transaction id per commit: one
    // statement's 50,000 rows under a single id would be planned differently).
    await db.query(`DO $$ BEGIN
      FOR t IN 1..1000 LOOP
        INSERT INTO events (stream_id, stream_type, stream_position, type, data)
          SELECT 'bulk-' || t || '-' || g, 'gate', 1, 'noted', '{}' FROM generate_series(1, 50) g;
        COMMIT;
      END LOOP;
    END $$`);
    await db.query('ANALYZE events');
  });
  after(() => db.end());

  it('plans no sequential scan of events', async () => {
    const nodes = await planNodes(db, GATE_SQL);
    const scans = nodes.filter((n) => n['Relation Name'] === 'events').map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}`);
    expect(scans, JSON.stringify(nodes.map((n) => n['Node Type']))).to.have.length(1);
    expect(scans[0]).to.match(/^Index Only Scan events_transaction_order_idx|^Index Scan events_transaction_order_idx/);
  });

  // xmin is cluster-wide: another test file's transaction, running side by side, can hold events
  // back for a moment; "holds none" is therefore waited for (a gate that always held would time out).
  const holdsNoneSoon = async (pool: pg.Pool) => (await eventually(async () => !(await selectGate(pool)).isHoldingEvents, 30_000, 50)).ok;

  it('holds events committed after a transaction still running, and none once it ends', async () => {
    expect(await holdsNoneSoon(db)).to.equal(true);
    const older = await db.connect();
    try {
      await older.query('BEGIN');
      await older.query('SELECT pg_current_xact_id()');
      await insertEvent(db, 'after-the-older-one');
      const held = await selectGate(db);
      expect(held.isHoldingEvents).to.equal(true);
      await older.query('COMMIT');
      const { rows } = await db.query<{ xid: string }>("SELECT max(transaction_id)::text AS xid FROM events WHERE stream_id = 'after-the-older-one'");
      expect(BigInt(held.xmin) <= BigInt(rows[0]!.xid), 'xmin is at or before the held event').to.equal(true);
    } finally {
      older.release();
    }
    expect(await holdsNoneSoon(db)).to.equal(true);
  });

  it('holds nothing on an empty log', async () => {
    const empty = new pg.Pool({ connectionString: await createTestDatabase(), max: 1 });
    try {
      expect((await selectGate(empty)).isHoldingEvents).to.equal(false);
    } finally {
      await empty.end();
    }
  });
});
