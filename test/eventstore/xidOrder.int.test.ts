// Transaction ids compare as numbers: 999 < 1000, though '999' > '1000' as text (a bug once made here).
import { expect } from 'chai';
import { LOG_START, compareCursors, cursorOf, type RecordedEvent } from '../../src/eventstore/index.js';
import { selectGlobalHead } from '../../src/eventstore/sql.js';
import type { Kernel } from '../../src/main.js';
import { startTestKernel } from '../support/service.js';
import { collect, DELIVERY_DEADLINE_MS } from './helpers.js';

/** Transaction ids on both sides of every digit-count boundary up to 10^4, written in reverse order. */
const XIDS = ['9', '10', '99', '100', '999', '1000', '9999', '10000'];
const STREAM_TYPE = 'xidorder';

describe('event store: transaction id order across digit boundaries', () => {
  let kernel: Kernel;

  before(async function () {
    this.timeout(60_000);
    kernel = await startTestKernel();
    const pool = kernel.pool;
    // The rows below must sit under pg_snapshot_xmin or the gate hides them: use up xids until it does.
    const xmin = async () => BigInt((await pool.query<{ x: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x')).rows[0]!.x);
    while ((await xmin()) <= 10_100n) {
      const client = await pool.connect();
      try {
        for (let i = 0; i < 500; i++) await client.query('BEGIN; SELECT pg_current_xact_id(); COMMIT');
      } finally {
        client.release();
      }
    }
    // Inserted highest xid first, so global_position order is the reverse of transaction order.
    for (const [index, xid] of [...XIDS].reverse().entries()) {
      await pool.query(
        `INSERT INTO events (stream_id, stream_type, stream_position, type, data, transaction_id)
         VALUES ($1, $2, 1, 'Marked', $3, $4::xid8)`,
        [`${STREAM_TYPE}-${xid}`, STREAM_TYPE, JSON.stringify({ xid, inserted: index }), xid],
      );
    }
  });
  after(async () => {
    await kernel?.close();
  });

  const xidsOf = (events: readonly RecordedEvent[]) => events.filter((e) => e.streamType === STREAM_TYPE).map((e) => e.transactionId);

  it('compareCursors orders transaction ids numerically', () => {
    const cursor = (transactionId: string, globalPosition = 1) => ({ transactionId, globalPosition });
    expect(compareCursors(cursor('999'), cursor('1000'))).to.be.below(0);
    expect(compareCursors(cursor('1000'), cursor('999'))).to.be.above(0);
    expect(compareCursors(cursor('10000', 1), cursor('10000', 2))).to.be.below(0);
    expect(compareCursors(cursor('18446744073709551615'), cursor('9'))).to.be.above(0);
  });

  it('a page-size-1 reader meets every event once, in numeric transaction order', async () => {
    const delivered: RecordedEvent[] = [];
    let cursor = LOG_START;
    for (;;) {
      const page = await kernel.store.readGlobal(cursor, 1, { streamTypes: [STREAM_TYPE] });
      if (page.length === 0) break;
      cursor = cursorOf(page[0]!);
      delivered.push(page[0]!);
    }
    expect(xidsOf(delivered)).to.deep.equal(XIDS);
  });

  it('the global head is at or after the highest transaction, not the last by text', async () => {
    const head = await selectGlobalHead(kernel.pool);
    expect(compareCursors(head, { transactionId: '10000', globalPosition: 0 })).to.be.above(0);
    expect(xidsOf(await kernel.store.readGlobal(LOG_START, 10_000))).to.deep.equal(XIDS);
  });

  it('subscribeToAll replays them once each, in order, from the start and from the middle', async () => {
    const all = collect(kernel.follower.subscribeToAll(LOG_START, { streamTypes: [STREAM_TYPE] }));
    const fromMiddle = collect(
      kernel.follower.subscribeToAll({ transactionId: '999', globalPosition: Number.MAX_SAFE_INTEGER }, { streamTypes: [STREAM_TYPE] }),
    );
    try {
      expect(xidsOf(await all.waitFor(XIDS.length, DELIVERY_DEADLINE_MS))).to.deep.equal(XIDS);
      expect(xidsOf(await fromMiddle.waitFor(3, DELIVERY_DEADLINE_MS))).to.deep.equal(['1000', '9999', '10000']);
    } finally {
      all.stop();
      fromMiddle.stop();
    }
  });
});
