// A multi-stream append commits whole or not at all, and stored events can never be changed.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Kernel } from '../../src/main.js';
import type { RecordedEvent } from '../../src/eventstore/index.js';
import { VersionConflictError } from '../../src/kernel/errors.js';
import { startTestKernel } from '../support/service.js';
import { collect, positionsOf } from './helpers.js';

describe('event store: atomic multi-stream appends', () => {
  let kernel: Kernel;

  before(async () => {
    kernel = await startTestKernel();
  });
  after(async () => {
    await kernel?.close();
  });

  async function countEvents(): Promise<number> {
    const { rows } = await kernel.pool.query<{ count: number }>('SELECT count(*)::int AS count FROM events');
    return rows[0]!.count;
  }

  async function seed(streamId: string, count: number): Promise<void> {
    const events = Array.from({ length: count }, (_, i) => ({ type: 'Seeded', data: { i } }));
    await kernel.store.append({ streamId, expectedVersion: 0, events });
  }

  it('does not report a commit when a statement of the transaction failed and the work went on (PostgreSQL rolled the COMMIT back)', async () => {
    const failure = await kernel.store
      .transact(async (tx) => {
        await tx.append({ streamId: 'swallowed-1', expectedVersion: 0, events: [{ type: 'Kept', data: {} }] });
        await tx.client.query('SELECT 1 / 0').catch(() => undefined);
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(String(failure)).to.match(/rolled back/);
    expect(await kernel.store.streamVersion('swallowed-1')).to.equal(0);
  });

  it('leaves nothing in either stream when the second stream is not at its expected version', async () => {
    await seed('left-1', 1);
    await seed('right-1', 2);
    const before = await countEvents();
    const local = collect(kernel.follower.localCommits$);

    const failure = await kernel.store
      .append([
        {
          streamId: 'left-1',
          expectedVersion: 1,
          events: [
            { type: 'LeftWritten', data: {} },
            { type: 'LeftWritten', data: {} },
          ],
        },
        { streamId: 'right-1', expectedVersion: 5, events: [{ type: 'RightWritten', data: {} }] },
      ])
      .catch((error: unknown) => error);

    expect(failure).to.be.instanceOf(VersionConflictError);
    expect(failure).to.include({ streamId: 'right-1', expectedVersion: 5, actualVersion: 2 });
    expect(positionsOf(await kernel.store.readWholeStream('left-1'))).to.deep.equal([1]);
    expect(positionsOf(await kernel.store.readWholeStream('right-1'))).to.deep.equal([1, 2]);
    expect(await countEvents()).to.equal(before);
    expect(local.items, 'nothing announced for a rolled-back append').to.deep.equal([]);
    local.stop();
  });

  it('leaves nothing when the first stream is the wrong one, and keeps both streams usable', async () => {
    await seed('left-2', 3);
    const failure = await kernel.store
      .append([
        { streamId: 'left-2', expectedVersion: 2, events: [{ type: 'LeftWritten', data: {} }] },
        { streamId: 'right-2', expectedVersion: 0, events: [{ type: 'RightWritten', data: {} }] },
      ])
      .catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(VersionConflictError);
    expect(failure).to.include({ streamId: 'left-2', expectedVersion: 2, actualVersion: 3 });
    expect(await kernel.store.streamVersion('right-2')).to.equal(0);

    const retried = await kernel.store.append([
      { streamId: 'left-2', expectedVersion: 3, events: [{ type: 'LeftWritten', data: {} }] },
      { streamId: 'right-2', expectedVersion: 0, events: [{ type: 'RightWritten', data: {} }] },
    ]);
    expect(retried.versions).to.deep.equal({ 'left-2': 4, 'right-2': 1 });
    expect(retried.events.map((e) => [e.streamId, e.streamPosition])).to.deep.equal([
      ['left-2', 4],
      ['right-2', 1],
    ]);
    // Both streams of one call share one transaction.
    expect(retried.events[0]!.transactionId).to.equal(retried.events[1]!.transactionId);
  });

  it('rolls back everything transact() appended when the work throws afterwards', async () => {
    await seed('left-3', 1);
    const before = await countEvents();
    const local = collect(kernel.follower.localCommits$);
    let appendedInside: RecordedEvent[] = [];

    const failure = await kernel.store
      .transact(async (tx) => {
        const first = await tx.append({ streamId: 'left-3', expectedVersion: 1, events: [{ type: 'LeftWritten', data: {} }] });
        const second = await tx.append({ streamId: 'right-3', expectedVersion: 0, events: [{ type: 'RightWritten', data: {} }] });
        appendedInside = [...first.events, ...second.events];
        // Inside the transaction the appends are visible to its own client.
        const { rows } = await tx.client.query<{ count: number }>(`SELECT count(*)::int AS count FROM events WHERE stream_id IN ('left-3', 'right-3')`);
        expect(rows[0]!.count).to.equal(3);
        throw new Error('work failed after appending');
      })
      .catch((error: unknown) => error);

    expect((failure as Error).message).to.equal('work failed after appending');
    expect(appendedInside.map((e) => e.streamPosition)).to.deep.equal([2, 1]);
    expect(positionsOf(await kernel.store.readWholeStream('left-3'))).to.deep.equal([1]);
    expect(await kernel.store.readWholeStream('right-3')).to.deep.equal([]);
    expect(await countEvents()).to.equal(before);
    await sleep(50);
    expect(local.items, 'no wake-up for a rolled-back transaction').to.deep.equal([]);
    local.stop();

    // The same positions are free again, and the pool's client came back clean (not mid-transaction).
    const after = await kernel.store.append([
      { streamId: 'left-3', expectedVersion: 1, events: [{ type: 'LeftWritten', data: {} }] },
      { streamId: 'right-3', expectedVersion: 0, events: [{ type: 'RightWritten', data: {} }] },
    ]);
    expect(after.versions).to.deep.equal({ 'left-3': 2, 'right-3': 1 });
  });

  it('commits transact() appends to several streams together and announces them only after the commit', async () => {
    const local = collect(kernel.follower.localCommits$);
    const result = await kernel.store.transact(async (tx) => {
      await tx.append({ streamId: 'left-4', expectedVersion: 0, events: [{ type: 'LeftWritten', data: {} }] });
      // Not announced yet: the transaction has not committed.
      expect(local.items).to.deep.equal([]);
      await tx.append({ streamId: 'right-4', expectedVersion: 0, events: [{ type: 'RightWritten', data: {} }] });
      return 'done';
    });
    expect(result).to.equal('done');
    expect(local.items.map((e) => e.streamId)).to.deep.equal(['left-4', 'right-4']);
    expect(await kernel.store.streamVersion('left-4')).to.equal(1);
    expect(await kernel.store.streamVersion('right-4')).to.equal(1);
    local.stop();
  });
});

describe('event store: immutability', () => {
  let kernel: Kernel;
  let original: RecordedEvent;

  before(async () => {
    kernel = await startTestKernel();
    const { events } = await kernel.store.append({ streamId: 'fixed-1', expectedVersion: 0, events: [{ type: 'Fixed', data: { value: 1 } }] });
    original = events[0]!;
  });
  after(async () => {
    await kernel?.close();
  });

  async function refusal(sql: string): Promise<{ code?: string; message: string }> {
    const error = await kernel.pool.query(sql).then(
      () => undefined,
      (e: { code?: string; message: string }) => e,
    );
    expect(error, `${sql} must be refused`).to.not.equal(undefined);
    return error!;
  }

  async function assertUnchanged(): Promise<void> {
    const events = await kernel.store.readWholeStream('fixed-1');
    expect(events).to.deep.equal([original]);
  }

  it('refuses UPDATE of an event', async () => {
    const error = await refusal(`UPDATE events SET data = '{"value": 2}' WHERE stream_id = 'fixed-1'`);
    expect(error.code).to.equal('23001');
    expect(error.message).to.match(/immutable/);
    await assertUnchanged();
  });

  it('refuses DELETE of an event', async () => {
    const error = await refusal(`DELETE FROM events WHERE stream_id = 'fixed-1'`);
    expect(error.code).to.equal('23001');
    await assertUnchanged();
  });

  it('refuses TRUNCATE of the log', async () => {
    const error = await refusal('TRUNCATE events');
    expect(error.code).to.equal('23001');
    await assertUnchanged();
  });
});
