// Tamper evidence: a superuser who edits, deletes, swaps, inserts or rewrites events is caught, at the right place.
import { expect } from 'chai';
import { verifyAuditLog } from '../../src/audit/verify.js';
import { eventHash, ZERO_HASH } from '../../src/eventstore/canonical.js';
import { AWKWARD_DATA, appendSampleStreams, bogusHash, openFixture, tamper, type AuditFixture } from './helpers.js';

const B3 = `stream_id = 'order-b' AND stream_position = 3`;

describe('audit: hash chains', () => {
  let fixture: AuditFixture;

  beforeEach(async () => {
    fixture = await openFixture();
    await appendSampleStreams(fixture.store);
  });
  afterEach(async () => {
    await fixture?.pool.end();
  });

  it('chains every event in the append path, and the chain reads back identically after jsonb normalised the data', async () => {
    const events = await fixture.store.readWholeStream('order-a');
    expect(events.map((e) => e.hash))
      .to.have.length(5)
      .and.not.include(null);
    expect(events[0]!.data).to.deep.include({ ...AWKWARD_DATA, n: 1 });
    let previous = ZERO_HASH;
    for (const event of events) {
      expect(eventHash(previous, event), `position ${event.streamPosition}`).to.equal(event.hash);
      previous = event.hash!;
    }
    const [imported] = await fixture.store.readWholeStream('import-1');
    expect(imported!.recordedAt).to.equal('2026-01-02T03:04:05.123Z');
    expect(await verifyAuditLog(fixture.pool)).to.deep.equal({ ok: true, events_checked: 16, checkpoints_checked: 0, first_broken: null });
  });

  it('catches an edited data field', async () => {
    await tamper(fixture.url, `UPDATE events SET data = jsonb_set(data, '{n}', '30') WHERE ${B3}`);
    expect((await verifyAuditLog(fixture.pool)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches a deleted event', async () => {
    await tamper(fixture.url, `DELETE FROM events WHERE ${B3}`);
    const report = await verifyAuditLog(fixture.pool);
    expect(report.ok).to.equal(false);
    expect(report.first_broken).to.deep.equal({ stream_id: 'order-b', stream_position: 3, reason: 'event missing: the stream goes on at position 4' });
  });

  it('catches two events swapped', async () => {
    await tamper(
      fixture.url,
      `UPDATE events SET stream_position = 100 WHERE ${B3}`,
      `UPDATE events SET stream_position = 3 WHERE stream_id = 'order-b' AND stream_position = 4`,
      `UPDATE events SET stream_position = 4 WHERE stream_id = 'order-b' AND stream_position = 100`,
    );
    expect((await verifyAuditLog(fixture.pool)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches an inserted event', async () => {
    await tamper(
      fixture.url,
      `UPDATE events SET stream_position = stream_position + 100 WHERE stream_id = 'order-b' AND stream_position >= 3`,
      `UPDATE events SET stream_position = stream_position - 99 WHERE stream_id = 'order-b' AND stream_position > 100`,
      `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, hash)
       SELECT stream_id, stream_type, 3, type, jsonb_set(data, '{n}', '99'), metadata, hash FROM events WHERE stream_id = 'order-b' AND stream_position = 4`,
    );
    expect((await verifyAuditLog(fixture.pool)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches a rewritten hash', async () => {
    await tamper(fixture.url, `UPDATE events SET hash = decode('${bogusHash('forged')}', 'hex') WHERE ${B3}`);
    expect((await verifyAuditLog(fixture.pool)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });
});
