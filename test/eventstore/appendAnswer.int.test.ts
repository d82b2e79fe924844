// The append answers its events without reading them back: what it answers must be exactly what a
// read of the table gives (key order included), or an inline projection and its rebuild could differ.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Kernel } from '../../src/main.js';
import type { JsonObject } from '../../src/kernel/json.js';
import { asJsonb } from '../../src/kernel/jsonbShape.js';
import { startTestKernel } from '../support/service.js';

/** JSON values jsonb can hold: no NUL character, no lone surrogate (the service refuses both earlier). */
const storableString = fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\u0000'));
const storableKey = fc.oneof(storableString, fc.constantFrom('a', 'bb', '10', '2', '__proto__', 'é', '😀', 'Z', 'aa'));
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    storableString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(storableKey, tie('value'), { maxKeys: 6 }),
  ),
})).value;
const jsonObject = fc.dictionary(storableKey, jsonValue, { maxKeys: 6 }) as fc.Arbitrary<JsonObject>;

describe('event store: the append answers what a read gives', () => {
  let kernel: Kernel;

  before(async () => {
    kernel = await startTestKernel();
  });
  after(async () => {
    await kernel?.close();
  });

  it('asJsonb gives every JSON value in the shape PostgreSQL jsonb gives it back', async () => {
    await fc.assert(
      fc.asyncProperty(jsonValue, async (value) => {
        const { rows } = await kernel.pool.query<{ doc: unknown }>('SELECT $1::jsonb AS doc', [JSON.stringify(value)]);
        expect(JSON.stringify(asJsonb(value))).to.equal(JSON.stringify(rows[0]!.doc));
      }),
      { numRuns: 300 },
    );
  });

  it('drops undefined members, applies toJSON and turns -0 into 0, as a stored document would', async () => {
    const value = { b: undefined, when: new Date(Date.UTC(2026, 0, 2)), list: [undefined, -0], z: 1, a: { y: 2, x: 1 } };
    const { rows } = await kernel.pool.query<{ doc: unknown }>('SELECT $1::jsonb AS doc', [JSON.stringify(value)]);
    expect(JSON.stringify(asJsonb(value))).to.equal(JSON.stringify(rows[0]!.doc));
  });

  it('answers, for events of several streams, exactly the events a read of those streams gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(jsonObject, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
        jsonObject,
        async (streams, metadata) => {
          const ids = streams.map(() => `answer-${crypto.randomUUID()}`);
          const answer = await kernel.store.append(
            streams.map((datas, s) => ({
              streamId: ids[s]!,
              expectedVersion: 0,
              events: datas.map((data, i) => ({ type: `T${i}`, data, metadata: { n: i } })),
            })),
            { metadata: { custom: metadata } },
          );
          const read = (await Promise.all(ids.map((id) => kernel.store.readWholeStream(id)))).flat().sort((a, b) => a.globalPosition - b.globalPosition);
          expect(JSON.stringify(answer.events)).to.equal(JSON.stringify(read));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('answers a single-stream append (group commit) as the read gives it, after earlier events', async () => {
    const streamId = `answer-${crypto.randomUUID()}`;
    await kernel.store.append({ streamId, expectedVersion: 0, events: [{ type: 'First', data: { b: 1, a: 2 } }] });
    const answer = await kernel.store.append({ streamId, expectedVersion: 1, events: [{ type: 'Second', data: { long_key: 1, k: { zz: 1, y: [2] } } }] });
    const read = await kernel.store.readStream(streamId, 1);
    expect(answer.events).to.have.length(1);
    expect(JSON.stringify(answer.events)).to.equal(JSON.stringify(read));
    expect(Object.keys(answer.events[0]!.data)).to.deep.equal(['k', 'long_key']);
  });
});
