// Tamper evidence: a superuser who edits, deletes, swaps, inserts or rewrites events is caught, at the right place.
import { expect } from 'chai';
import { verifyAuditLog } from '../../src/audit/verify.js';
import { writeCheckpoint } from '../../src/audit/checkpoints.js';
import type { Checkpoint } from '../../src/audit/digest.js';
import { waitUntil } from '../eventstore/helpers.js';
import { eventHash, ZERO_HASH } from '../../src/eventstore/canonical.js';
import { selectGlobalHead, selectLastPosition } from '../../src/eventstore/sql.js';
import { generateSigningKeyHex, loadSigningKeys } from '../../src/iam/keys.js';
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
    expect(await verifyAuditLog(fixture.pool, fixture.keys.jwks)).to.deep.equal({ ok: true, events_checked: 16, checkpoints_checked: 0, first_broken: null });
  });

  it('catches an edited data field', async () => {
    await tamper(fixture.url, `UPDATE events SET data = jsonb_set(data, '{n}', '30') WHERE ${B3}`);
    expect((await verifyAuditLog(fixture.pool, fixture.keys.jwks)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches a deleted event', async () => {
    await tamper(fixture.url, `DELETE FROM events WHERE ${B3}`);
    const report = await verifyAuditLog(fixture.pool, fixture.keys.jwks);
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
    expect((await verifyAuditLog(fixture.pool, fixture.keys.jwks)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches an inserted event', async () => {
    await tamper(
      fixture.url,
      `UPDATE events SET stream_position = stream_position + 100 WHERE stream_id = 'order-b' AND stream_position >= 3`,
      `UPDATE events SET stream_position = stream_position - 99 WHERE stream_id = 'order-b' AND stream_position > 100`,
      `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, hash)
       SELECT stream_id, stream_type, 3, type, jsonb_set(data, '{n}', '99'), metadata, hash FROM events WHERE stream_id = 'order-b' AND stream_position = 4`,
    );
    expect((await verifyAuditLog(fixture.pool, fixture.keys.jwks)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });

  it('catches a rewritten hash', async () => {
    await tamper(fixture.url, `UPDATE events SET hash = decode('${bogusHash('forged')}', 'hex') WHERE ${B3}`);
    expect((await verifyAuditLog(fixture.pool, fixture.keys.jwks)).first_broken).to.deep.include({ stream_id: 'order-b', stream_position: 3 });
  });
});

/** A checkpoint reaches only the gated horizon: other transactions on the cluster may hold it back a while, so wait for it to pass every event. */
async function checkpointOnceGated(fixture: AuditFixture): Promise<Checkpoint> {
  const last = await selectLastPosition(fixture.pool);
  await waitUntil(async () => (await selectGlobalHead(fixture.pool)).globalPosition >= last, 15_000, 'the gate to pass every event');
  let written: Checkpoint | null = null;
  await waitUntil(async () => (written = await writeCheckpoint(fixture.store, fixture.keys, { now: () => new Date() })) !== null, 15_000, 'a checkpoint');
  return written!;
}

describe('audit: signed checkpoints', () => {
  let fixture: AuditFixture;
  const clock = { now: () => new Date() };

  beforeEach(async () => {
    fixture = await openFixture();
    await appendSampleStreams(fixture.store);
    expect(await checkpointOnceGated(fixture)).to.include({ sequence: 1, events: 16 });
    await fixture.store.append({ streamId: 'order-d', expectedVersion: 0, events: [{ type: 'OrderChanged', data: { n: 1 } }] });
    expect(await checkpointOnceGated(fixture)).to.include({ sequence: 2, events: 18 });
    // Nothing new but the checkpoint itself: no checkpoint of checkpoints unless forced.
    expect(await writeCheckpoint(fixture.store, fixture.keys, clock)).to.equal(null);
  });
  afterEach(async () => {
    await fixture?.pool.end();
  });

  it('verifies the checkpoints and their signatures against the JWKS only', async () => {
    expect(await verifyAuditLog(fixture.pool, fixture.keys.jwks)).to.deep.equal({ ok: true, events_checked: 19, checkpoints_checked: 2, first_broken: null });
    const stranger = await loadSigningKeys(generateSigningKeyHex());
    expect((await verifyAuditLog(fixture.pool, stranger.jwks)).first_broken).to.deep.include({ stream_id: 'audit-checkpoints', stream_position: 1 });
  });

  it('catches an edited checkpoint, even with its hash chain rewritten to match', async () => {
    const [first, second] = await fixture.store.readWholeStream('audit-checkpoints');
    const edited = { ...first!, data: { ...first!.data, events: 15 } };
    const editedHash = eventHash(ZERO_HASH, edited);
    const secondHash = eventHash(editedHash, second!);
    await tamper(
      fixture.url,
      `UPDATE events SET data = jsonb_set(data, '{events}', '15'), hash = decode('${editedHash}', 'hex') WHERE stream_id = 'audit-checkpoints' AND stream_position = 1`,
      `UPDATE events SET hash = decode('${secondHash}', 'hex') WHERE stream_id = 'audit-checkpoints' AND stream_position = 2`,
    );
    const report = await verifyAuditLog(fixture.pool, fixture.keys.jwks);
    expect(report.events_checked).to.equal(19);
    expect(report.first_broken).to.deep.equal({ stream_id: 'audit-checkpoints', stream_position: 1, reason: 'signed content differs from the checkpoint' });
  });

  it('catches an edited event whose stream was re-chained, by the digest of the checkpoint that covers it', async () => {
    const events = await fixture.store.readWholeStream('order-b');
    let previous = ZERO_HASH;
    const statements = events.map((event) => {
      const data = event.streamPosition === 3 ? { ...event.data, n: 30 } : event.data;
      previous = eventHash(previous, { ...event, data });
      return `UPDATE events SET data = '${JSON.stringify(data).replace(/'/g, "''")}'::jsonb, hash = decode('${previous}', 'hex') WHERE stream_id = 'order-b' AND stream_position = ${event.streamPosition}`;
    });
    await tamper(fixture.url, ...statements);
    const report = await verifyAuditLog(fixture.pool, fixture.keys.jwks);
    expect(report).to.deep.include({ ok: false, events_checked: 19 });
    expect(report.first_broken).to.deep.include({ stream_id: 'audit-checkpoints', stream_position: 1 });
    expect(report.first_broken!.reason).to.match(/^digest mismatch/);
  });

  it('catches a forged tail inserted below a checkpoint horizon', async () => {
    // A correctly chained sixth event, given a transaction id below the first checkpoint's horizon.
    const [fifth] = (await fixture.store.readWholeStream('order-c')).slice(-1);
    const forged = { ...fifth!, streamPosition: 6, data: { forged: true } };
    await tamper(
      fixture.url,
      `INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at, transaction_id, hash)
       VALUES ('order-c', 'order', 6, '${forged.type}', '{"forged":true}', '${JSON.stringify(forged.metadata)}', '${forged.recordedAt}', '${fifth!.transactionId}',
               decode('${eventHash(fifth!.hash!, forged)}', 'hex'))`,
    );
    expect((await verifyAuditLog(fixture.pool, fixture.keys.jwks)).first_broken).to.deep.include({ stream_id: 'audit-checkpoints', stream_position: 1 });
  });
});
