// Subscriptions that start mid-log: replay then live, with writers in this and another kernel never pausing.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { LOG_START, cursorOf, type EventStore, type GlobalCursor, type RecordedEvent } from '../../src/eventstore/index.js';
import type { Kernel } from '../../src/main.js';
import { startTestKernel } from '../support/service.js';
import { selectGlobalHead, selectLastPosition } from '../../src/eventstore/sql.js';
import { collect, DELIVERY_DEADLINE_MS, positionsOf, range, startSlowPollNode, waitUntil, type SlowPollNode } from './helpers.js';

interface Writer {
  store: EventStore;
}

describe('event store: subscriptions while appends keep coming', () => {
  /** The subscriber's side: the kernel's wiring with a one-minute poll, so every delivery is a wake-up's. */
  let local: SlowPollNode;
  /** A second kernel on the same database: another process as far as the first can tell. */
  let remote: Kernel;

  before(async () => {
    remote = await startTestKernel();
    local = await startSlowPollNode(remote.database.url);
  });
  after(async () => {
    await remote?.close();
    await local?.close();
  });

  async function seedStream(kernel: Writer, streamId: string, count: number, batch = 100): Promise<void> {
    for (let from = 0; from < count; from += batch) {
      const events = range(from + 1, Math.min(count, from + batch)).map((n) => ({ type: 'Seeded', data: { n } }));
      await kernel.store.append({ streamId, expectedVersion: from, events });
    }
  }

  /** Appends `count` single events with `any`, one after the other, each tagged with its writer. */
  async function keepAppending(kernel: Writer, streamIds: readonly string[], count: number, writer: string): Promise<void> {
    for (let seq = 0; seq < count; seq++) {
      const streamId = streamIds[seq % streamIds.length]!;
      await kernel.store.append({ streamId, expectedVersion: 'any', events: [{ type: 'LiveWritten', data: { writer, seq } }] });
    }
  }

  /**
   * The gated log from `from` to its end, once the gate lets every committed event through: it is
   * the cluster's, and another test file's open transaction may hold it a while in parallel runs.
   */
  async function readGlobalToEnd(kernel: Writer, from: GlobalCursor, streamTypes?: readonly string[]): Promise<RecordedEvent[]> {
    const last = await selectLastPosition(kernel.store.pool);
    await waitUntil(async () => (await selectGlobalHead(kernel.store.pool)).globalPosition >= last, DELIVERY_DEADLINE_MS, 'the gate to pass every event');
    const events: RecordedEvent[] = [];
    for (;;) {
      const page = await kernel.store.readGlobal(events.length > 0 ? cursorOf(events.at(-1)!) : from, 1000, { streamTypes });
      events.push(...page);
      if (page.length < 1000) return events;
    }
  }

  it('replays a stream from the middle, then goes live, with no gap and no duplicate while two writers append', async () => {
    const streamId = 'busy-1';
    await seedStream(local, streamId, 1500);
    // The writers are already running when the subscription starts, and run on through its replay.
    const writers = Promise.all([keepAppending(local, [streamId], 150, 'local'), keepAppending(remote, [streamId], 150, 'remote')]);
    await sleep(20);
    const subscription = collect(local.follower.subscribeToStream(streamId, 250));
    await writers;
    const total = 1500 + 300;

    const received = await subscription.waitFor(total - 250, DELIVERY_DEADLINE_MS);
    await sleep(200);
    expect(positionsOf(received)).to.deep.equal(range(251, total));
    const stored = await local.store.readWholeStream(streamId);
    expect(received).to.deep.equal(stored.slice(250));
    // Both writers' events came through (the remote ones through NOTIFY and the gated tail).
    expect(received.filter((e) => e.data.writer === 'remote')).to.have.length(150);
    expect(received.filter((e) => e.data.writer === 'local')).to.have.length(150);
    subscription.stop();
  });

  it('delivers a subscription from position 0 of a new stream, live events only', async () => {
    const subscription = collect(local.follower.subscribeToStream('fresh-1'));
    await sleep(50);
    expect(subscription.items).to.deep.equal([]);
    await remote.store.append({ streamId: 'fresh-1', expectedVersion: 0, events: [{ type: 'LiveWritten', data: { seq: 0 } }] });
    await local.store.append({ streamId: 'fresh-1', expectedVersion: 1, events: [{ type: 'LiveWritten', data: { seq: 1 } }] });
    const received = await subscription.waitFor(2, DELIVERY_DEADLINE_MS);
    await sleep(100);
    expect(received.map((e) => [e.streamPosition, e.data.seq])).to.deep.equal([
      [1, 0],
      [2, 1],
    ]);
    subscription.stop();
  });

  it('replays the global log from a cursor in the middle, then goes live, in order, with writers in both kernels', async () => {
    const streams = range(1, 8).map((n) => `mixa-${n}`);
    for (const streamId of streams) await seedStream(local, streamId, 200);
    const seeded = await readGlobalToEnd(local, LOG_START);
    // More than one replay page (1000) lies after the cursor.
    const middle = cursorOf(seeded.at(-1201)!);

    const writers = Promise.all([
      keepAppending(local, ['mixa-1', 'mixa-2', 'mixb-1'], 150, 'local'),
      keepAppending(remote, ['mixa-3', 'mixb-2'], 150, 'remote'),
      // Multi-stream transactions from the other kernel too.
      (async () => {
        for (let seq = 0; seq < 40; seq++) {
          await remote.store.append([
            { streamId: 'mixa-4', expectedVersion: 'any', events: [{ type: 'LiveWritten', data: { writer: 'pair', seq } }] },
            { streamId: 'mixb-3', expectedVersion: 'any', events: [{ type: 'LiveWritten', data: { writer: 'pair', seq } }] },
          ]);
        }
      })(),
    ]);
    await sleep(20);
    const everything = collect(local.follower.subscribeToAll(middle));
    const onlyA = collect(local.follower.subscribeToAll(middle, { streamTypes: ['mixa'] }));
    await writers;

    const expected = await readGlobalToEnd(local, middle);
    const expectedA = expected.filter((e) => e.streamType === 'mixa');
    expect(expected).to.have.length(1200 + 300 + 80);
    expect(expectedA).to.have.length(1200 + 100 + 75 + 40);
    const received = await everything.waitFor(expected.length, DELIVERY_DEADLINE_MS);
    const receivedA = await onlyA.waitFor(expectedA.length, DELIVERY_DEADLINE_MS);
    await sleep(200);
    expect(summary(received)).to.deep.equal(summary(expected));
    expect(summary(receivedA)).to.deep.equal(summary(expectedA));
    everything.stop();
    onlyA.stop();
  });
});

function summary(events: readonly RecordedEvent[]): string[] {
  return events.map((e) => `${e.transactionId}/${e.globalPosition}/${e.streamId}@${e.streamPosition}`);
}
