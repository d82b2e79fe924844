// An append to a stream whose head this process committed is hashed in the process (ChainHeads);
// these check that such links are the true chain, including after rollbacks and other writers.
import { expect } from 'chai';
import type { Kernel } from '../../src/main.js';
import { EventStore, eventHash, ZERO_HASH, type RecordedEvent } from '../../src/eventstore/index.js';
import { VersionConflictError } from '../../src/kernel/errors.js';
import { startTestKernel } from '../support/service.js';

/** The stream's hashes as a verifier recomputes them, next to the stored ones. */
function expectTrueChain(events: readonly RecordedEvent[]): void {
  let previous = ZERO_HASH;
  for (const event of events) {
    const expected = eventHash(previous, event);
    expect(event.hash, `hash of ${event.streamId}@${event.streamPosition}`).to.equal(expected);
    previous = expected;
  }
}

describe('event store: chain heads hashed in the process', () => {
  let kernel: Kernel;
  const event = (n: number) => ({ type: 'Counted', data: { n, nested: { b: 2, a: [1, { y: 'x' }] } } });

  before(async () => {
    kernel = await startTestKernel();
  });
  after(async () => {
    await kernel?.close();
  });

  it('links appends at known heads (single, batched, in transactions) into the true chain, with the time in the hash', async () => {
    const streamId = `heads-${crypto.randomUUID()}`;
    await kernel.store.append({ streamId, expectedVersion: 0, events: [event(1)] }, { metadata: { note: 'first' } });
    await kernel.store.append({ streamId, expectedVersion: 1, events: [event(2), event(3)] });
    await kernel.store.transact((tx) => tx.append({ streamId, expectedVersion: 3, events: [event(4)] }, { metadata: { per: 'call' } }));
    await kernel.store.append([
      { streamId, expectedVersion: 4, events: [{ ...event(5), metadata: { own: true } }, event(6)] },
      { streamId: `${streamId}-other`, expectedVersion: 0, events: [event(1)] },
    ]);
    const events = await kernel.store.readWholeStream(streamId);
    expect(events.map((e) => e.streamPosition)).to.deep.equal([1, 2, 3, 4, 5, 6]);
    expect(events[4]!.metadata).to.include({ own: true });
    // Hashed here means stamped with this process's clock, which has milliseconds only: proof that
    // these went the in-process way (the database's time has microseconds).
    for (const e of events) expect(e.recordedAt).to.match(/T\d\d:\d\d:\d\d\.\d{3}Z$/);
    expectTrueChain(events);
    expectTrueChain(await kernel.store.readWholeStream(`${streamId}-other`));
  });

  it('never chains from a head of a transaction that rolled back', async () => {
    const streamId = `heads-${crypto.randomUUID()}`;
    await kernel.store.append({ streamId, expectedVersion: 0, events: [event(1)] });
    const failure = await kernel.store
      .transact(async (tx) => {
        await tx.append({ streamId, expectedVersion: 1, events: [event(2)] });
        throw new Error('changed my mind');
      })
      .catch((error: Error) => error);
    expect(failure).to.be.instanceOf(Error).with.property('message', 'changed my mind');
    await kernel.store.append({ streamId, expectedVersion: 1, events: [event(20)] });
    const events = await kernel.store.readWholeStream(streamId);
    expect(events.map((e) => e.data.n)).to.deep.equal([1, 20]);
    expectTrueChain(events);
  });

  it('refuses a head another writer moved on, then links to the true head', async () => {
    const streamId = `heads-${crypto.randomUUID()}`;
    // A second store on the same database stands for another process: its heads are its own.
    const other = new EventStore({ pool: kernel.pool });
    await kernel.store.append({ streamId, expectedVersion: 0, events: [event(1)] });
    await other.append({ streamId, expectedVersion: 1, events: [event(2)] });
    const conflict = await kernel.store.append({ streamId, expectedVersion: 1, events: [event(3)] }).catch((error: unknown) => error);
    expect(conflict).to.be.instanceOf(VersionConflictError);
    await kernel.store.append({ streamId, expectedVersion: 2, events: [event(3)] });
    await other.append({ streamId, expectedVersion: 3, events: [event(4)] });
    await kernel.store.append({ streamId, expectedVersion: 4, events: [event(5)] });
    const events = await kernel.store.readWholeStream(streamId);
    expect(events.map((e) => e.data.n)).to.deep.equal([1, 2, 3, 4, 5]);
    expectTrueChain(events);
  });

  it('leaves a stream another writer moved on out of a group commit without failing the others', async () => {
    const moved = `heads-${crypto.randomUUID()}`;
    const quiet = `heads-${crypto.randomUUID()}`;
    const other = new EventStore({ pool: kernel.pool });
    await kernel.store.append({ streamId: moved, expectedVersion: 0, events: [event(1)] });
    await kernel.store.append({ streamId: quiet, expectedVersion: 0, events: [event(1)] });
    await other.append({ streamId: moved, expectedVersion: 1, events: [event(2)] });
    const [stale, fine] = await Promise.allSettled([
      kernel.store.append({ streamId: moved, expectedVersion: 1, events: [event(3)] }),
      kernel.store.append({ streamId: quiet, expectedVersion: 1, events: [event(2)] }),
    ]);
    expect(stale.status).to.equal('rejected');
    expect(fine.status).to.equal('fulfilled');
    expectTrueChain(await kernel.store.readWholeStream(quiet));
    expectTrueChain(await kernel.store.readWholeStream(moved));
  });
});
