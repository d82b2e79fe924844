// RowFold: which rows it asks the table for before folding a batch of events.
import { expect } from 'chai';
import type { RecordedEvent } from '../../src/eventstore/types.js';
import { RowFold } from '../../src/projections/fold.js';
import { defineProjection, type Row } from '../../src/projections/types.js';

const event = (streamId: string, type: string, position: number): RecordedEvent => ({
  globalPosition: position,
  streamId,
  streamType: 'thing',
  streamPosition: position,
  type,
  data: {},
  metadata: {},
  transactionId: '1',
  hash: null,
  recordedAt: '2030-01-01T00:00:00.000Z',
});

const things = defineProjection({
  name: 'things',
  version: 1,
  table: 'things',
  key: ['id'],
  eventTypes: ['ThingOpened', 'ThingChanged'],
  startsRow: ['ThingOpened'],
  keysOf: (e) => [{ id: e.streamId }],
  evolve: (row: Row | null, key, e) => ({ ...(row ?? {}), id: key.id ?? null, last: e.type }),
});

describe('RowFold.unknownKeys', () => {
  it('loads no row for a key whose first event in the batch starts its row', () => {
    const fold = new RowFold(things);
    expect(fold.unknownKeys([event('a', 'ThingOpened', 1), event('a', 'ThingChanged', 2)])).to.deep.equal([]);
  });

  it('loads the row of a key first met through any other event, once', () => {
    const fold = new RowFold(things);
    expect(fold.unknownKeys([event('b', 'ThingChanged', 3), event('b', 'ThingChanged', 4), event('c', 'ThingOpened', 5)])).to.deep.equal([{ id: 'b' }]);
  });

  it('folds a started row from nothing', () => {
    const fold = new RowFold(things);
    const events = [event('a', 'ThingOpened', 1), event('a', 'ThingChanged', 2)];
    fold.seed(fold.unknownKeys(events), []);
    events.forEach((e) => fold.apply(e));
    expect(fold.takeChanges().upserts).to.deep.equal([{ id: 'a', last: 'ThingChanged' }]);
  });
});
