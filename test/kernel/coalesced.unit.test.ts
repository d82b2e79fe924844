// coalesced: calls made while a task runs fold into one more run after it.
import { expect } from 'chai';
import { coalesced } from '../../src/kernel/coalesced.js';

describe('coalesced', () => {
  it('runs once more after the current run for any number of calls made meanwhile, with the first call’s arguments', async () => {
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const task = coalesced(async (label: string) => {
      runs.push(label);
      if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = task('first');
    await Promise.all([task('second'), task('third')]);
    expect(runs).to.deep.equal(['first']);
    release();
    await first;
    expect(runs).to.deep.equal(['first', 'first']);
    await task('later');
    expect(runs).to.deep.equal(['first', 'first', 'later']);
  });

  it('rejects the call that started a failing run, and runs again at the next call', async () => {
    let calls = 0;
    const task = coalesced(async () => {
      calls++;
      if (calls === 1) throw new Error('boom');
    });
    const failure = await task().catch((error: unknown) => error);
    expect(String(failure)).to.contain('boom');
    await task();
    expect(calls).to.equal(2);
  });
});
