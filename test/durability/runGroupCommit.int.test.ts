// Group commit of run appends: appends that wait together commit together, and one append's trouble
// (a stale version, a lease held elsewhere, a concurrent writer) stays that append's.
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { EventStore, type RecordedEvent } from '../../src/eventstore/index.js';
import { LeaseLost, RunGroupCommit, type RunAppend } from '../../src/runs/engine/runGroupCommit.js';
import { VersionConflictError } from '../../src/kernel/errors.js';
import { newId } from '../../src/kernel/ids.js';
import { createTestDatabase } from '../support/db.js';
import { eventually } from '../support/http.js';

const OWNER = 'group-commit-test';
const LEASE_MS = 30_000;

function append(runId: string, expectedVersion = 0, releasesLease = false): RunAppend {
  return {
    runId,
    stream: `run-${runId}`,
    expectedVersion,
    events: [
      { type: 'step_started', data: { n: expectedVersion + 1 } },
      { type: 'step_completed', data: { n: expectedVersion + 2 } },
    ],
    releasesLease,
  };
}

describe('run appends: group commit', () => {
  let pool: Pool;
  let store: EventStore;
  let commits: RunGroupCommit;

  const leaseOf = async (runId: string) =>
    (await pool.query('SELECT owner FROM svc_run_leases WHERE run_id = $1', [runId])).rows[0]?.owner as string | undefined;
  const streamOf = (runId: string) => store.readWholeStream(`run-${runId}`);
  const transactionsOf = (events: readonly RecordedEvent[]) => new Set(events.map((e) => e.transactionId));

  before(async () => {
    pool = createPool({ connectionString: await createTestDatabase(), max: 10 });
    store = new EventStore({ pool });
    // One commit at a time makes the batches predictable: the first write goes alone, the rest wait together.
    commits = new RunGroupCommit(store, OWNER, LEASE_MS, { maxBatch: 100, maxInFlight: 1 });
  });
  after(async () => {
    await pool?.end();
  });

  it('commits the appends that waited together in one transaction, each at its own positions, with a lease each', async () => {
    const runs = Array.from({ length: 20 }, () => newId());
    const written = await Promise.all(runs.map((runId) => commits.commit(append(runId))));
    for (const [index, events] of written.entries()) {
      expect(events.map((e) => [e.streamId, e.streamPosition, e.type])).to.deep.equal([
        [`run-${runs[index]}`, 1, 'step_started'],
        [`run-${runs[index]}`, 2, 'step_completed'],
      ]);
      expect(await leaseOf(runs[index]!)).to.equal(OWNER);
    }
    expect(transactionsOf(written[0]!).size).to.equal(1);
    expect(transactionsOf(written.slice(1).flat()).size, 'the 19 that waited share one commit').to.equal(1);
    expect(transactionsOf(written.flat()).size).to.equal(2);
  });

  it('answers a stale version with a conflict for that append alone; the others of its commit go in', async () => {
    const [first, stale, fresh] = [newId(), newId(), newId()];
    await commits.commit(append(stale));
    const results = await Promise.allSettled([commits.commit(append(first)), commits.commit(append(stale, 0)), commits.commit(append(fresh))]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).to.be.instanceOf(VersionConflictError);
    expect((await streamOf(stale)).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
    expect((await streamOf(fresh)).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
  });

  it('refuses an append whose run another process holds, writing nothing for it, and still commits the others', async () => {
    const [first, taken, other] = [newId(), newId(), newId()];
    await pool.query(`INSERT INTO svc_run_leases (run_id, owner, expires_at) VALUES ($1, 'someone-else', now() + interval '1 minute')`, [taken]);
    const results = await Promise.allSettled([commits.commit(append(first)), commits.commit(append(taken)), commits.commit(append(other))]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).to.be.instanceOf(LeaseLost);
    expect(await streamOf(taken)).to.deep.equal([]);
    expect(await leaseOf(taken)).to.equal('someone-else');
    expect((await streamOf(other)).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
    expect(await leaseOf(other)).to.equal(OWNER);
  });

  it('gives the lease up with the append that ends a run, unless another process holds it', async () => {
    const [ending, stolen] = [newId(), newId()];
    await commits.commit(append(ending));
    await commits.commit(append(stolen));
    expect(await leaseOf(ending)).to.equal(OWNER);
    await commits.commit(append(ending, 2, true));
    expect(await leaseOf(ending), 'released in the commit').to.equal(undefined);
    await pool.query(`UPDATE svc_run_leases SET owner = 'someone-else' WHERE run_id = $1`, [stolen]);
    const refused = await commits.commit(append(stolen, 2, true)).catch((error: unknown) => error);
    expect(refused).to.be.instanceOf(LeaseLost);
    expect((await streamOf(stolen)).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
    expect(await leaseOf(stolen)).to.equal('someone-else');
  });

  it('when a concurrent writer takes a position first, only that append gets the conflict', async () => {
    const [first, contested, bystander] = [newId(), newId(), newId()];
    const rival = await pool.connect();
    try {
      await rival.query('BEGIN');
      await rival.query(`INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata) VALUES ($1, 'run', 1, 'paused', '{}', '{}')`, [
        `run-${contested}`,
      ]);
      const results = Promise.allSettled([commits.commit(append(first)), commits.commit(append(contested)), commits.commit(append(bystander))]);
      // The second commit waits on the rival's uncommitted position, then collides with it.
      const isWaiting = async () =>
        (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount! > 0;
      expect((await eventually(isWaiting, 15_000)).ok, 'a commit waits on the rival').to.equal(true);
      await rival.query('COMMIT');
      const settled = await results;
      expect(settled.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect((settled[1] as PromiseRejectedResult).reason).to.be.instanceOf(VersionConflictError);
      expect((settled[1] as PromiseRejectedResult).reason.streamId).to.equal(`run-${contested}`);
    } finally {
      rival.release();
    }
    expect((await streamOf(contested)).map((e) => e.type)).to.deep.equal(['paused']);
    expect((await streamOf(bystander)).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
  });
});
