// The start-up backfill: events stored before the chains existed get their hashes, once, whoever runs it.
import { expect } from 'chai';
import { verifyAuditLog } from '../../src/audit/verify.js';
import { createPool } from '../../src/db/pool.js';
import { backfillEventHashes } from '../../src/eventstore/index.js';
import { openFixture, type AuditFixture } from './helpers.js';

describe('audit: backfill of events stored before the hash chains', () => {
  let fixture: AuditFixture;

  before(async () => {
    fixture = await openFixture();
  });
  after(async () => {
    await fixture?.pool.end();
  });

  it('hashes every old event exactly once with two processes racing, including events appended onto an unhashed head', async () => {
    // Rows as the code before migration 0014 wrote them: no hash, the database's own time.
    await fixture.pool.query(
      `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata)
       SELECT 'old-' || s, 'old', p, 'OldEvent', jsonb_build_object('s', s, 'p', p, 'f', 1.50, 'big', 1e20), '{"actor":"legacy"}'
       FROM generate_series(1, 300) s, generate_series(1, 10) p`,
    );
    // Appended by the new code onto an unhashed head: stored unhashed too, for the backfill to chain.
    const { events } = await fixture.store.append({ streamId: 'old-1', expectedVersion: 10, events: [{ type: 'NewEvent', data: { after: 'upgrade' } }] });
    expect(events[0]!.hash).to.equal(null);
    const broken = await verifyAuditLog(fixture.pool, fixture.keys.jwks);
    expect(broken.first_broken).to.deep.include({ reason: 'event has no hash' });

    const other = createPool({ connectionString: fixture.url, max: 2 });
    try {
      const counts = await Promise.all([backfillEventHashes(fixture.pool), backfillEventHashes(other)]);
      expect(counts[0] + counts[1]).to.equal(3001);
      expect(await backfillEventHashes(other)).to.equal(0);
    } finally {
      await other.end();
    }
    const { events: next } = await fixture.store.append({ streamId: 'old-1', expectedVersion: 11, events: [{ type: 'NewEvent', data: { chained: true } }] });
    expect(next[0]!.hash).to.match(/^[0-9a-f]{64}$/);
    expect(await verifyAuditLog(fixture.pool, fixture.keys.jwks)).to.deep.equal({ ok: true, events_checked: 3002, checkpoints_checked: 0, first_broken: null });
  });

  it('leaves the events immutable apart from filling a missing hash once', async () => {
    const error = await fixture.pool.query(`UPDATE events SET hash = hash WHERE stream_id = 'old-2' AND stream_position = 1`).catch((e: Error) => e);
    expect(error)
      .to.be.instanceOf(Error)
      .with.property('message')
      .that.matches(/events are immutable/);
  });
});
