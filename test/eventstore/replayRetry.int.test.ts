// A global subscription whose replay read fails keeps going: it retries at the next wake-up, nothing lost.
import { expect } from 'chai';
import { LOG_START } from '../../src/eventstore/index.js';
import type { Kernel } from '../../src/main.js';
import { startTestKernel } from '../support/service.js';
import { collect, DELIVERY_DEADLINE_MS } from './helpers.js';

describe('event store: a failed replay of the global log', () => {
  let kernel: Kernel;

  before(async () => {
    kernel = await startTestKernel();
  });
  after(async () => {
    await kernel?.close();
  });

  it('is retried on the next wake-up, and the subscription then delivers the backlog and live events in order', async () => {
    const { store, follower } = kernel;
    await store.append({ streamId: 'retried-1', expectedVersion: 0, events: [{ type: 'Before', data: {} }] });
    const readGlobal = store.readGlobal.bind(store);
    let failures = 0;
    store.readGlobal = async (...args) => {
      if (failures++ === 0) throw new Error('connection lost (injected)');
      return readGlobal(...args);
    };
    try {
      const feed = collect(follower.subscribeToAll(LOG_START, { streamTypes: ['retried'] }));
      // This append's wake-up is what retries the replay.
      await store.append({ streamId: 'retried-2', expectedVersion: 0, events: [{ type: 'After', data: {} }] });
      const events = await feed.waitFor(2, DELIVERY_DEADLINE_MS);
      feed.stop();
      expect(failures).to.be.at.least(2);
      expect(events.map((e) => `${e.streamId}:${e.type}`)).to.deep.equal(['retried-1:Before', 'retried-2:After']);
    } finally {
      store.readGlobal = readGlobal;
    }
  });
});
