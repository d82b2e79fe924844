// While the gate holds committed events back: stream subscriptions get other processes' events
// anyway (one ungated read per wake-up for every followed stream), and the gated tail looks again by
// itself, so a transaction that sends no NOTIFY (another database's, a lease renewal) does not
// leave readers of the whole log waiting for the poll.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { connectionConfig } from '../../src/db/pool.js';
import { LOG_START, type RecordedEvent } from '../../src/eventstore/index.js';
import { createTestDatabase } from '../support/db.js';
import { collect, DELIVERY_DEADLINE_MS, startSlowPollNode, type SlowPollNode } from './helpers.js';

describe('event store: reading while the gate holds events back', () => {
  let node: SlowPollNode;
  let writer: SlowPollNode;
  let blocker: pg.Client;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    node = await startSlowPollNode(databaseUrl);
    writer = await startSlowPollNode(databaseUrl);
    blocker = new pg.Client(connectionConfig(databaseUrl, 'blocker'));
    await blocker.connect();
  });
  after(async () => {
    await blocker?.query('ROLLBACK').catch(() => undefined);
    await blocker?.end();
    await writer?.close();
    await node?.close();
  });

  /** Gives the blocker a transaction id: from then on the gate holds back whatever commits after it. */
  async function openBlocker(): Promise<void> {
    await blocker.query('BEGIN');
    await blocker.query('SELECT pg_current_xact_id()');
  }

  it("delivers another process's events to stream subscriptions, with one read per wake-up for all of them", async () => {
    const reads = { perSubscriber: 0, batched: 0 };
    const { readStream, readStreamsAfter } = node.store;
    node.store.readStream = (...args) => (reads.perSubscriber++, readStream.apply(node.store, args));
    node.store.readStreamsAfter = (...args) => (reads.batched++, readStreamsAfter.apply(node.store, args));
    const streams = Array.from({ length: 20 }, (_, i) => `followed-${i}`);
    const subscriptions = streams.flatMap((streamId) => Array.from({ length: 10 }, () => collect<RecordedEvent>(node.follower.subscribeToStream(streamId))));
    try {
      // Every subscription live (its replay done, a first event seen), and nothing of its own in flight.
      for (const streamId of streams) await writer.store.append({ streamId, expectedVersion: 0, events: [{ type: 'Seeded', data: {} }] });
      await Promise.all(subscriptions.map((subscription) => subscription.waitFor(1, DELIVERY_DEADLINE_MS)));
      await sleep(300);
      reads.perSubscriber = 0;
      reads.batched = 0;
      await openBlocker();
      await writer.store.append({ streamId: 'followed-7', expectedVersion: 1, events: [{ type: 'PassedTheGate', data: {} }] });
      const followers = subscriptions.slice(70, 80);
      await Promise.all(followers.map((follower) => follower.waitFor(2, DELIVERY_DEADLINE_MS)));
      expect(followers.map((f) => f.items[1]!.type)).to.deep.equal(Array(10).fill('PassedTheGate'));
      expect(
        subscriptions.filter((s) => s.items.length > 1),
        'only the followers of that stream',
      ).to.have.length(10);
      expect(reads.perSubscriber, 'reads of one subscriber').to.equal(0);
      expect(reads.batched, 'batched reads (one per wake-up)').to.be.at.least(1).and.at.most(3);
    } finally {
      node.store.readStream = readStream;
      node.store.readStreamsAfter = readStreamsAfter;
      subscriptions.forEach((s) => s.stop());
      await blocker.query('ROLLBACK');
    }
  });

  it('delivers an event held behind a transaction that ends without a NOTIFY, long before the next poll', async () => {
    const onLog = collect<RecordedEvent>(node.follower.subscribeToAll(LOG_START, { streamTypes: ['behind'] }));
    try {
      await openBlocker();
      const { events } = await node.store.append({ streamId: 'behind-1', expectedVersion: 0, events: [{ type: 'HeldBack', data: {} }] });
      await sleep(300);
      expect(onLog.items, 'the gate held the event back').to.deep.equal([]);
      await blocker.query('COMMIT');
      const [event] = await onLog.waitFor(1, DELIVERY_DEADLINE_MS);
      expect(event!.globalPosition).to.equal(events[0]!.globalPosition);
    } finally {
      onLog.stop();
    }
  });
});
