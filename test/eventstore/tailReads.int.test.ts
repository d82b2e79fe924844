// When the gated tail reads: after a local commit only for subscribers that need this process's events from it.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { type RecordedEvent } from '../../src/eventstore/index.js';
import { selectGlobalHead } from '../../src/eventstore/sql.js';
import { createTestDatabase } from '../support/db.js';
import { appendInChildProcess, collect, DELIVERY_DEADLINE_MS, startSlowPollNode, waitUntil, type Collector, type SlowPollNode } from './helpers.js';

/** Long enough for a read triggered by a commit's wake-up to have been sent many times over. */
const QUIET_MS = 500;

describe('event store: when the gated tail reads', function () {
  // One test spawns a Node process that compiles TypeScript and starts a kernel.
  this.timeout(30_000);

  let databaseUrl: string;
  /** The poll is a minute away: every read within a test comes from a wake-up. */
  let node: SlowPollNode;
  /** Reads of the global log (tail and replays) since the last reset. */
  let reads = 0;

  before(async () => {
    databaseUrl = await createTestDatabase();
    node = await startSlowPollNode(databaseUrl);
    const readGlobal = node.store.readGlobal.bind(node.store);
    node.store.readGlobal = (...args) => {
      reads++;
      return readGlobal(...args);
    };
    const readTail = node.store.readTail.bind(node.store);
    node.store.readTail = (...args) => {
      reads++;
      return readTail(...args);
    };
  });
  after(async () => {
    await node?.close();
  });

  const appendLocally = (streamId: string, n: number) => node.store.append({ streamId, expectedVersion: 'any', events: [{ type: 'TailTested', data: { n } }] });

  /** A subscriber of the stream type from the log's head; resolves once its replay is done. */
  async function subscribe(streamType: string, localCommitsTaken: boolean): Promise<Collector<RecordedEvent>> {
    const before = reads;
    const collector = collect(node.follower.subscribeToAll(await selectGlobalHead(node.pool), { streamTypes: [streamType] }, { localCommitsTaken }));
    await waitUntil(async () => reads > before, DELIVERY_DEADLINE_MS, 'the replay to read');
    await sleep(50);
    return collector;
  }

  it('does not read after local commits for subscribers that take them from localCommits$, and skips them when another process wakes it', async () => {
    const taking = await subscribe('quiet', true);
    reads = 0;
    for (let n = 1; n <= 3; n++) await appendLocally(`quiet-${n}`, n);
    await sleep(QUIET_MS);
    expect(reads, 'reads after three local commits').to.equal(0);

    // Another process's commit wakes the tail through NOTIFY: it reads that, and not this process's own.
    await appendInChildProcess(databaseUrl, 'quiet-child');
    await taking.waitFor(1, DELIVERY_DEADLINE_MS);
    await sleep(QUIET_MS);
    expect(reads, 'reads after the other process committed').to.be.greaterThan(0);
    expect(taking.items.map((e) => e.streamId)).to.deep.equal(['quiet-child']);
    taking.stop();
  });

  it('a subscriber that needs local commits from the tail still gets those it skipped before it came, from its replay', async () => {
    const taking = await subscribe('late', true);
    const head = await selectGlobalHead(node.pool);
    await appendLocally('late-1', 1);
    await appendInChildProcess(databaseUrl, 'late-child');
    await taking.waitFor(1, DELIVERY_DEADLINE_MS);
    // The tail has moved past late-1 (skipped); a subscriber from before it replays it from the table.
    const needing = collect(node.follower.subscribeToAll(head, { streamTypes: ['late'] }));
    expect((await needing.waitFor(2, DELIVERY_DEADLINE_MS)).map((e) => e.streamId)).to.have.members(['late-1', 'late-child']);
    await appendLocally('late-2', 2);
    expect((await needing.waitFor(3, DELIVERY_DEADLINE_MS)).map((e) => e.streamId).at(-1)).to.equal('late-2');
    needing.stop();
    taking.stop();
  });

  it('reads after each local commit while a subscriber needs them from the tail, and stops once it leaves', async () => {
    const taking = await subscribe('eager', true);
    const needing = await subscribe('eager', false);
    await appendLocally('eager-1', 1);
    // Delivered by the local commit's wake-up: the poll is a minute away and no other process writes.
    expect((await needing.waitFor(1, DELIVERY_DEADLINE_MS)).map((e) => e.streamId)).to.deep.equal(['eager-1']);
    expect((await taking.waitFor(1, DELIVERY_DEADLINE_MS)).map((e) => e.streamId)).to.deep.equal(['eager-1']);

    needing.stop();
    await sleep(50);
    reads = 0;
    await appendLocally('eager-2', 2);
    await sleep(QUIET_MS);
    expect(reads, 'reads after a local commit once the subscriber left').to.equal(0);
    taking.stop();
  });
});
