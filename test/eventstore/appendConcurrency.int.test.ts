// Optimistic concurrency under real contention: one winner per expected version, `any` always lands.
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { EventStore, type RecordedEvent } from '../../src/eventstore/index.js';
import { VersionConflictError } from '../../src/kernel/errors.js';
import { createTestDatabase } from '../support/db.js';
import { positionsOf, range } from './helpers.js';

const ROUNDS = 200;
const WRITERS = 5;

describe('event store: concurrent appends', () => {
  let pool: Pool;
  let store: EventStore;

  before(async () => {
    pool = createPool({ connectionString: await createTestDatabase(), max: 10 });
    store = new EventStore({ pool });
  });
  after(async () => {
    await pool?.end();
  });

  it(`lets exactly one of ${WRITERS} writers with the same expected version win, ${ROUNDS} rounds in a row`, async () => {
    const streamId = 'race-1';
    const winners: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const version = await store.streamVersion(streamId);
      // Writer w appends w % 2 + 1 events, so a wrong winner would also show in the positions.
      const attempts = await Promise.allSettled(
        range(0, WRITERS - 1).map((writer) =>
          store.append({
            streamId,
            expectedVersion: version,
            events: range(1, (writer % 2) + 1).map((part) => ({ type: 'RaceWon', data: { round, writer, part } })),
          }),
        ),
      );
      const won = attempts.flatMap((a, writer) => (a.status === 'fulfilled' ? [writer] : []));
      expect(won, `winners of round ${round}`).to.have.length(1);
      const winner = won[0]!;
      winners.push(winner);
      for (const attempt of attempts) {
        if (attempt.status === 'fulfilled') {
          expect(attempt.value.versions).to.deep.equal({ [streamId]: version + (winner % 2) + 1 });
          continue;
        }
        expect(attempt.reason).to.be.instanceOf(VersionConflictError);
        const conflict = attempt.reason as VersionConflictError;
        expect(conflict.code).to.equal('CONFLICT');
        expect(conflict.streamId).to.equal(streamId);
        expect(conflict.expectedVersion).to.equal(version);
      }
    }

    const events = await store.readWholeStream(streamId);
    const expectedLength = winners.reduce((sum, w) => sum + (w % 2) + 1, 0);
    expect(positionsOf(events)).to.deep.equal(range(1, expectedLength));
    // The events are exactly the winners' batches, in round order, each batch whole and in order.
    const expectedData = winners.flatMap((writer, round) => range(1, (writer % 2) + 1).map((part) => ({ round, writer, part })));
    expect(events.map((e) => e.data)).to.deep.equal(expectedData);
    const { rows } = await pool.query<{ count: number }>('SELECT count(*)::int AS count FROM events WHERE stream_id = $1', [streamId]);
    expect(rows[0]!.count).to.equal(expectedLength);
  });

  it('lets one of several multi-stream appends racing on a shared stream win, leaving nothing of the losers', async () => {
    for (let round = 0; round < 50; round++) {
      const version = await store.streamVersion('shared-1');
      const attempts = await Promise.allSettled(
        range(0, WRITERS - 1).map((writer) =>
          store.append([
            { streamId: `own-${writer}`, expectedVersion: 'any', events: [{ type: 'OwnWritten', data: { round, writer } }] },
            { streamId: 'shared-1', expectedVersion: version, events: [{ type: 'SharedWritten', data: { round, writer } }] },
          ]),
        ),
      );
      const won = attempts.flatMap((a, writer) => (a.status === 'fulfilled' ? [writer] : []));
      expect(won, `winners of round ${round}`).to.have.length(1);
      attempts.forEach((a) => a.status === 'rejected' && expect(a.reason).to.be.instanceOf(VersionConflictError));
    }
    const shared = await store.readWholeStream('shared-1');
    expect(positionsOf(shared)).to.deep.equal(range(1, 50));
    // Every own-stream event belongs to the round its writer won: the losers' halves rolled back.
    const owned: RecordedEvent[] = [];
    for (const writer of range(0, WRITERS - 1)) owned.push(...(await store.readWholeStream(`own-${writer}`)));
    expect(owned).to.have.length(50);
    const sharedByRound = new Map(shared.map((e) => [e.data.round, e.data.writer]));
    for (const event of owned) expect(sharedByRound.get(event.data.round)).to.equal(event.data.writer);
  });

  it("lands every concurrent `expectedVersion: 'any'` append, at contiguous positions", async () => {
    const streamId = 'any-1';
    const writers = 12;
    const appendsEach = 25;
    await Promise.all(
      range(0, writers - 1).map(async (writer) => {
        for (let seq = 0; seq < appendsEach; seq++) {
          await store.append({ streamId, expectedVersion: 'any', events: [{ type: 'AnyWritten', data: { writer, seq } }] });
        }
      }),
    );
    const events = await store.readWholeStream(streamId);
    expect(positionsOf(events)).to.deep.equal(range(1, writers * appendsEach));
    // Each writer's appends appear once each and in the order it made them.
    for (const writer of range(0, writers - 1)) {
      const own = events.filter((e) => e.data.writer === writer).map((e) => e.data.seq);
      expect(own, `writer ${writer}`).to.deep.equal(range(0, appendsEach - 1));
    }
  });

  it("answers the version each `any` append reached, matching its events' positions", async () => {
    const streamId = 'any-2';
    const results = await Promise.all(
      range(0, 9).map((writer) =>
        store.append({
          streamId,
          expectedVersion: 'any',
          events: [
            { type: 'AnyWritten', data: { writer, seq: 0 } },
            { type: 'AnyWritten', data: { writer, seq: 1 } },
          ],
        }),
      ),
    );
    for (const result of results) {
      const [first, second] = result.events;
      expect(second!.streamPosition).to.equal(first!.streamPosition + 1);
      expect(result.versions[streamId]).to.equal(second!.streamPosition);
    }
    expect(results.map((r) => r.versions[streamId]).sort((a, b) => a! - b!)).to.deep.equal(range(1, 10).map((n) => n * 2));
  });
});
