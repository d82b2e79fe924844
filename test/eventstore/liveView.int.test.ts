// A live view that keeps the last event of each stream must not be undone by the gated feed bringing
// back an older event this process already applied at its commit (a later one still behind the gate).
import { expect } from 'chai';
import pg from 'pg';
import { startLiveView, type LiveView } from '../../src/eventstore/liveView.js';
import { selectGlobalHead } from '../../src/eventstore/sql.js';
import type { Kernel } from '../../src/main.js';
import { eventually } from '../support/http.js';
import { startTestKernel } from '../support/service.js';

describe('event store: live views in stream order', () => {
  let kernel: Kernel;
  let view: LiveView | undefined;
  const blockers: pg.Client[] = [];

  /** A transaction that holds an xid open: the snapshot gate holds back what commits after it began. */
  async function openBlocker(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: kernel.database.url });
    blockers.push(client);
    await client.connect();
    await client.query('BEGIN');
    await client.query('SELECT pg_current_xact_id()');
    return client;
  }

  before(async () => {
    kernel = await startTestKernel();
  });
  after(async () => {
    view?.stop();
    for (const client of blockers) await client.end().catch(() => undefined);
    await kernel?.close();
  });

  it('keeps the newer value while the gated feed delivers the older event of the same stream', async () => {
    const latest = new Map<string, string>();
    const gated: number[] = [];
    view = await startLiveView(kernel, {
      name: 'settings-under-test',
      streamTypes: ['setting'],
      inStreamOrder: true,
      load: async () => undefined,
      apply: (event) => latest.set(event.streamId, String((event.data as { value: string }).value)),
    });
    const feed = kernel.follower
      .subscribeToAll(await selectGlobalHead(kernel.pool), { streamTypes: ['setting'] })
      .subscribe((event) => gated.push(event.streamPosition));
    try {
      // Two transactions open around the two commits: the first holds the old event back until after the
      // new one is applied here, the second holds the new one back after the first ends.
      const first = await openBlocker();
      await kernel.store.append({ streamId: 'setting-color', expectedVersion: 0, events: [{ type: 'SettingChanged', data: { value: 'old' } }] });
      const second = await openBlocker();
      await kernel.store.append({ streamId: 'setting-color', expectedVersion: 1, events: [{ type: 'SettingChanged', data: { value: 'new' } }] });
      expect(latest.get('setting-color'), 'applied at its commit').to.equal('new');
      expect(gated, 'both events are behind the gate').to.deep.equal([]);
      await first.query('ROLLBACK');
      kernel.wakeUps.announceCommit();
      expect((await eventually(async () => gated.includes(1), 15_000, 20)).ok, 'the gated feed brought the old event').to.equal(true);
      expect(gated, 'the new event is still behind the gate').to.not.include(2);
      expect(latest.get('setting-color')).to.equal('new');
      await second.query('ROLLBACK');
    } finally {
      feed.unsubscribe();
    }
  });
});
