// Wake-ups across processes: an append in a child process wakes this one through LISTEN/NOTIFY, also after a reconnect.
import { expect } from 'chai';
import pg from 'pg';
import { firstValueFrom, timeout } from 'rxjs';
import { connectionConfig } from '../../src/db/pool.js';
import { LOG_START, type WakeReason } from '../../src/eventstore/index.js';
import { createTestDatabase } from '../support/db.js';
import { appendInChildProcess, collect, DELIVERY_DEADLINE_MS, startSlowPollNode, waitUntil, type Collector, type SlowPollNode } from './helpers.js';

describe('event store: cross-process wake-ups', function () {
  // Each test spawns a Node process that compiles TypeScript and starts a kernel.
  this.timeout(30_000);

  let databaseUrl: string;
  /** This process's side; its own poll is a minute away, so only a NOTIFY can deliver within the deadline. */
  let node: SlowPollNode;
  let admin: pg.Client;
  let wakes: Collector<WakeReason>;

  before(async () => {
    databaseUrl = await createTestDatabase();
    node = await startSlowPollNode(databaseUrl);
    admin = new pg.Client(connectionConfig(databaseUrl, 'test-admin'));
    await admin.connect();
    wakes = collect(node.wakeUps.wakes$);
  });
  after(async () => {
    wakes?.stop();
    await admin?.end();
    await node?.close();
  });

  async function listenBackends(): Promise<number[]> {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'svc-listen' AND datname = current_database() ORDER BY pid`,
    );
    return rows.map((r) => r.pid);
  }

  async function expectDeliveredFromChild(streamId: string): Promise<void> {
    const onStream = collect(node.follower.subscribeToStream(streamId));
    const onLog = collect(node.follower.subscribeToAll(LOG_START));
    const notifiesBefore = wakes.items.filter((w) => w === 'notify').length;
    try {
      const child = await appendInChildProcess(databaseUrl, streamId);
      const [event] = await onStream.waitFor(1, DELIVERY_DEADLINE_MS);
      expect(event).to.include({ streamId, streamPosition: 1, type: 'ChildAppended', globalPosition: child.globalPosition });
      expect(event!.transactionId).to.equal(child.transactionId);

      // The log replays earlier tests' events too, and the stream subscription (ungated) may hear of
      // the child's event before the gated tail: wait for that event itself. The tail waits for any
      // transaction open on the (shared) server.
      await waitUntil(async () => onLog.items.some((e) => e.streamId === streamId), DELIVERY_DEADLINE_MS, "the child's event in the global log");
      expect(onLog.items.filter((e) => e.streamId === streamId).map((e) => e.globalPosition)).to.deep.equal([child.globalPosition]);
      expect(wakes.items.filter((w) => w === 'notify').length, 'NOTIFY wake-ups').to.be.greaterThan(notifiesBefore);
    } finally {
      onStream.stop();
      onLog.stop();
    }
  }

  it('wakes a subscriber in this process when another process appends', async () => {
    expect(await listenBackends()).to.have.length(1);
    await expectDeliveredFromChild('child-1');
    // The child closed its kernel: its LISTEN connection goes, only ours is left.
    await waitUntil(async () => (await listenBackends()).length === 1, DELIVERY_DEADLINE_MS, "the child's LISTEN backend to go");
  });

  it('reconnects after the LISTEN backend is terminated, announces it, and still receives wake-ups', async () => {
    const [before, ...others] = await listenBackends();
    expect(others, 'only this process listens').to.deep.equal([]);
    const reconnected = firstValueFrom(node.wakeUps.reconnected$.pipe(timeout(DELIVERY_DEADLINE_MS)));
    const reconnectWakes = wakes.items.filter((w) => w === 'reconnect').length;

    const { rows } = await admin.query<{ terminated: boolean }>('SELECT pg_terminate_backend($1) AS terminated', [before]);
    expect(rows[0]!.terminated).to.equal(true);
    await reconnected;

    // The terminated backend may take a moment to leave pg_stat_activity.
    await waitUntil(async () => !(await listenBackends()).includes(before!), DELIVERY_DEADLINE_MS, 'the old LISTEN backend to go');
    const after = await listenBackends();
    expect(after).to.have.length(1);
    expect(after[0]).to.not.equal(before);
    expect(wakes.items.filter((w) => w === 'reconnect').length, 'reconnect wake-ups').to.be.greaterThan(reconnectWakes);

    await expectDeliveredFromChild('child-2');
    // The new connection also sends this process's NOTIFYs: another slow-poll node hears our appends.
    const other = await startSlowPollNode(databaseUrl);
    try {
      const onStream = collect(other.follower.subscribeToStream('parent-1'));
      await node.store.append({ streamId: 'parent-1', expectedVersion: 0, events: [{ type: 'ParentAppended', data: {} }] });
      const [event] = await onStream.waitFor(1, DELIVERY_DEADLINE_MS);
      expect(event).to.include({ streamId: 'parent-1', type: 'ParentAppended' });
      onStream.stop();
    } finally {
      await other.close();
    }
  });
});
