// The example project's runners: what a caller's input may make them do.
import { expect } from 'chai';
import settle, { MAX_SETTLE_MS, settleDelayMs } from '../../nodes/settle.js';

describe('example runner settle', () => {
  it('keeps the wait a request asks for within 0..10 s (fuzzing finding: ms 999997 held a worker and its slot for 17 minutes)', () => {
    expect(MAX_SETTLE_MS).to.equal(10_000);
    expect(settleDelayMs(999_997)).to.equal(MAX_SETTLE_MS);
    expect(settleDelayMs(1e308)).to.equal(MAX_SETTLE_MS);
    expect(settleDelayMs(-5)).to.equal(0);
    expect(settleDelayMs(Number.NaN)).to.equal(2000);
    expect(settleDelayMs(null)).to.equal(2000);
    expect(settleDelayMs(undefined)).to.equal(2000);
    expect(settleDelayMs(3000)).to.equal(3000);
  });

  it('settles at once for ms 0', async () => {
    const answer = await settle({ account: 'acme' }, { params: { ms: -1 } });
    expect(answer.settled_at).to.match(/^\d{4}-\d\d-\d\dT/);
  });
});
