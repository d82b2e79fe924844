// The global log behind the pg_snapshot_xmin gate: a transaction that commits late is never skipped.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { connectionConfig } from '../../src/db/pool.js';
import { LOG_START, compareCursors, cursorOf, type GlobalCursor, type RecordedEvent } from '../../src/eventstore/index.js';
import type { Kernel } from '../../src/main.js';
import { startTestKernel } from '../support/service.js';
import { collect, DELIVERY_DEADLINE_MS } from './helpers.js';

/** A global reader as rebuilds and async projections run it: page after page from its own cursor. */
class PagedReader {
  readonly delivered: RecordedEvent[] = [];
  constructor(
    private readonly kernel: Kernel,
    public cursor: GlobalCursor,
  ) {}

  /** Reads with page size 1 until the gated log has nothing more; answers what this pass found. */
  async readToEnd(): Promise<RecordedEvent[]> {
    const found: RecordedEvent[] = [];
    for (;;) {
      const page = await this.kernel.store.readGlobal(this.cursor, 1);
      expect(page.length).to.be.at.most(1);
      if (page.length === 0) break;
      this.cursor = cursorOf(page[0]!);
      found.push(page[0]!);
    }
    this.delivered.push(...found);
    return found;
  }

  /**
   * Reads until at least `count` events came. The gate is the whole cluster's: a transaction open in
   * another test file's database (the suite runs two files at once) holds every gated reader back
   * too, so what this file committed shows up once that one ends, not necessarily at once.
   */
  async readAtLeast(count: number): Promise<RecordedEvent[]> {
    const found: RecordedEvent[] = [];
    const deadline = Date.now() + DELIVERY_DEADLINE_MS;
    while (found.length < count && Date.now() < deadline) {
      found.push(...(await this.readToEnd()));
      if (found.length < count) await sleep(20);
    }
    return found;
  }
}

interface HeldRow {
  global_position: number;
  transaction_id: string;
}

describe('event store: global log and the snapshot gate', () => {
  let kernel: Kernel;
  let held: pg.Client;

  before(async () => {
    kernel = await startTestKernel();
  });
  beforeEach(async () => {
    held = new pg.Client(connectionConfig(kernel.database.url, 'held-writer'));
    await held.connect();
  });
  afterEach(async () => {
    await held.query('ROLLBACK').catch(() => undefined);
    await held.end();
  });
  after(async () => {
    await kernel?.close();
  });

  async function insertHeld(streamId: string): Promise<HeldRow> {
    const { rows } = await held.query<HeldRow>(
      `INSERT INTO events (stream_id, stream_type, stream_position, type, data)
       VALUES ($1, 'held', 1, 'HeldWritten', '{}') RETURNING global_position, transaction_id::text AS transaction_id`,
      [streamId],
    );
    return rows[0]!;
  }

  async function appendLater(streamId: string): Promise<RecordedEvent> {
    const { events } = await kernel.store.append({ streamId, expectedVersion: 0, events: [{ type: 'LaterWritten', data: {} }] });
    return events[0]!;
  }

  /** The cursor after every event committed so far in this file's database (see readAtLeast). */
  async function headCursor(): Promise<GlobalCursor> {
    const { rows } = await kernel.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM events');
    const reader = new PagedReader(kernel, LOG_START);
    await reader.readAtLeast(rows[0]!.count);
    return reader.cursor;
  }

  function summary(events: readonly RecordedEvent[]): [string, number][] {
    return events.map((e) => [e.streamId, e.globalPosition]);
  }

  it('holds back a later commit until an earlier open transaction commits, then delivers both in order (page size 1)', async () => {
    await kernel.store.append({
      streamId: 'seed-1',
      expectedVersion: 0,
      events: [
        { type: 'Seeded', data: {} },
        { type: 'Seeded', data: {} },
      ],
    });
    const reader = new PagedReader(kernel, LOG_START);
    expect((await reader.readAtLeast(2)).map((e) => e.streamId)).to.deep.equal(['seed-1', 'seed-1']);

    await held.query('BEGIN');
    const early = await insertHeld('held-1');
    const later = await appendLater('later-1');
    expect(later.globalPosition).to.be.greaterThan(early.global_position);
    expect(BigInt(later.transactionId) > BigInt(early.transaction_id)).to.equal(true);
    // The later event is committed and readable by stream...
    expect((await kernel.store.readStream('later-1')).map((e) => e.globalPosition)).to.deep.equal([later.globalPosition]);
    // ...but a global reader must not take it: it would move past the earlier event for good.
    expect(await reader.readToEnd()).to.deep.equal([]);
    expect(await kernel.store.readGlobal(reader.cursor, 1000)).to.deep.equal([]);

    await held.query('COMMIT');
    const found = await reader.readAtLeast(2);
    expect(summary(found)).to.deep.equal([
      ['held-1', early.global_position],
      ['later-1', later.globalPosition],
    ]);
    expect(found[0]!.transactionId).to.equal(early.transaction_id);
    expect(found[1]).to.deep.equal(later);
    // Everything the reader ever took is the whole log, once each, in cursor order.
    const whole = await kernel.store.readGlobal(LOG_START, 1000);
    expect(summary(reader.delivered)).to.deep.equal(summary(whole));
    assertStrictlyIncreasing(reader.delivered);
  });

  it('orders by transaction id, not global position, when the earlier transaction inserts last', async () => {
    const reader = new PagedReader(kernel, await headCursor());
    await held.query('BEGIN');
    // The held transaction takes its xid first but inserts after the other commit.
    await held.query('SELECT pg_current_xact_id()');
    const later = await appendLater('later-2');
    const early = await insertHeld('held-2');
    expect(early.global_position).to.be.greaterThan(later.globalPosition);
    expect(BigInt(early.transaction_id) < BigInt(later.transactionId)).to.equal(true);
    expect(await reader.readToEnd()).to.deep.equal([]);

    await held.query('COMMIT');
    expect(summary(await reader.readAtLeast(2))).to.deep.equal([
      ['held-2', early.global_position],
      ['later-2', later.globalPosition],
    ]);
    assertStrictlyIncreasing(reader.delivered);
  });

  it('skips nothing when the held transaction rolls back instead', async () => {
    const reader = new PagedReader(kernel, await headCursor());
    await held.query('BEGIN');
    await insertHeld('held-3');
    const later = await appendLater('later-3');
    expect(await reader.readToEnd()).to.deep.equal([]);
    await held.query('ROLLBACK');
    expect(summary(await reader.readAtLeast(1))).to.deep.equal([['later-3', later.globalPosition]]);
  });

  it('holds back subscribeToAll the same way, before and during its replay, then delivers both in order', async () => {
    const start = await headCursor();
    const fromBefore = collect(kernel.follower.subscribeToAll(start));
    await held.query('BEGIN');
    const early = await insertHeld('held-4');
    const later = await appendLater('later-4');
    // Subscribed while the earlier transaction is open: its replay must stop short of `later`.
    const duringHold = collect(kernel.follower.subscribeToAll(start));
    // The stream subscription needs no gate (positions within a stream commit in order): it gets `later` now.
    const laterStream = collect(kernel.follower.subscribeToStream('later-4'));
    await laterStream.waitFor(1, DELIVERY_DEADLINE_MS);
    await sleep(300);
    expect(fromBefore.items, 'subscribed before the hold').to.deep.equal([]);
    expect(duringHold.items, 'subscribed during the hold').to.deep.equal([]);

    await held.query('COMMIT');
    // A raw commit sends no wake-up: the slow poll (2 s) is what finds it.
    const expected: [string, number][] = [
      ['held-4', early.global_position],
      ['later-4', later.globalPosition],
    ];
    expect(summary(await fromBefore.waitFor(2, DELIVERY_DEADLINE_MS))).to.deep.equal(expected);
    expect(summary(await duringHold.waitFor(2, DELIVERY_DEADLINE_MS))).to.deep.equal(expected);

    // And what comes next follows, once each.
    const next = await appendLater('next-4');
    await fromBefore.waitFor(3, DELIVERY_DEADLINE_MS);
    await duringHold.waitFor(3, DELIVERY_DEADLINE_MS);
    await sleep(100);
    for (const collector of [fromBefore, duringHold]) {
      expect(summary(collector.items)).to.deep.equal([...expected, ['next-4', next.globalPosition]]);
      assertStrictlyIncreasing(collector.items);
      collector.stop();
    }
    laterStream.stop();
  });
});

function assertStrictlyIncreasing(events: readonly RecordedEvent[]): void {
  for (let i = 1; i < events.length; i++) {
    expect(compareCursors(cursorOf(events[i - 1]!), cursorOf(events[i]!)), `cursor order at ${i}`).to.be.lessThan(0);
  }
}
