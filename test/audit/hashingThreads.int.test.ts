// The chain walk on hashing threads: pages checked out of this thread find exactly what one thread finds,
// including breaks that straddle a page boundary (the state passed from page to page).
import { expect } from 'chai';
import { verifyChains } from '../../src/audit/chains.js';
import { appendSampleStreams, bogusHash, openFixture, tamper, type AuditFixture } from './helpers.js';

const B3 = `stream_id = 'order-b' AND stream_position = 3`;

const TAMPERING: Record<string, string[]> = {
  nothing: [],
  'an edited data field': [`UPDATE events SET data = jsonb_set(data, '{n}', '30') WHERE ${B3}`],
  'a deleted event': [`DELETE FROM events WHERE ${B3}`],
  'a rewritten hash': [`UPDATE events SET hash = decode('${bogusHash('forged')}', 'hex') WHERE ${B3}`],
  'an edit in the last stream': [`UPDATE events SET data = jsonb_set(data, '{n}', '31') WHERE stream_id = 'order-c' AND stream_position = 5`],
};

describe('audit: hash chains checked on hashing threads', () => {
  let fixture: AuditFixture;

  beforeEach(async () => {
    fixture = await openFixture();
    await appendSampleStreams(fixture.store);
  });
  afterEach(async () => {
    await fixture?.pool.end();
  });

  for (const [name, statements] of Object.entries(TAMPERING)) {
    it(`finds what one thread finds with ${name}, for pages of 1 and 3 events on 2 and 1 threads`, async () => {
      if (statements.length > 0) await tamper(fixture.url, ...statements);
      const here = await verifyChains(fixture.pool, { threads: 0 });
      if (name === 'nothing') expect(here).to.deep.equal({ checked: 16, broken: null });
      else expect(here.broken).to.not.equal(null);
      // Each walk starts its threads (under tsx a thread compiles its modules first): two walks a case.
      for (const [pageSize, threads] of [
        [1, 2],
        [3, 1],
      ] as const) {
        expect(await verifyChains(fixture.pool, { pageSize, threads }), `${pageSize} a page, ${threads} threads`).to.deep.equal(here);
      }
    });
  }
});
