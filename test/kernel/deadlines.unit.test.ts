// Deadlines: many deadlines on one timer, each called once, at or after its time by the clock.
import { expect } from 'chai';
import { fixedClock } from '../../src/kernel/clock.js';
import { Deadlines } from '../../src/kernel/deadlines.js';
import { eventually } from '../support/http.js';

const TICK_MS = 20;

function recorder(calls: string[], name: string) {
  return { due: () => calls.push(name) };
}

describe('Deadlines', () => {
  it('calls each deadline once, only after its time by the clock, and none that was deleted', async () => {
    const clock = fixedClock('2026-11-26T12:00:00.000Z');
    const deadlines = new Deadlines(clock, TICK_MS);
    const calls: string[] = [];
    const start = clock.now().getTime();
    const [soon, later, dropped] = [recorder(calls, 'soon'), recorder(calls, 'later'), recorder(calls, 'dropped')];
    deadlines.add(soon, start + 50);
    deadlines.add(later, start + 5_000);
    deadlines.add(dropped, start + 50);
    deadlines.delete(dropped);
    expect(deadlines.size).to.equal(2);
    // The clock has not moved: several ticks pass and nothing is due.
    await new Promise((resolve) => setTimeout(resolve, 5 * TICK_MS));
    expect(calls).to.deep.equal([]);
    clock.advance(60);
    expect((await eventually(async () => calls.length === 1, 2_000, 5)).ok).to.equal(true);
    expect(calls).to.deep.equal(['soon']);
    clock.advance(5_000);
    expect((await eventually(async () => calls.length === 2, 2_000, 5)).ok).to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 3 * TICK_MS));
    expect(calls).to.deep.equal(['soon', 'later']);
    expect(deadlines.size).to.equal(0);
  });

  it('moves a deadline added again, and lets a deadline add another while it is called', async () => {
    const clock = fixedClock('2026-11-26T12:00:00.000Z');
    const deadlines = new Deadlines(clock, TICK_MS);
    const calls: string[] = [];
    const start = clock.now().getTime();
    const moved = recorder(calls, 'moved');
    deadlines.add(moved, start + 10);
    deadlines.add(moved, start + 1_000);
    const chained = { due: () => (calls.push('first'), deadlines.add(recorder(calls, 'second'), start + 20)) };
    deadlines.add(chained, start + 10);
    clock.advance(30);
    expect((await eventually(async () => calls.length === 2, 2_000, 5)).ok).to.equal(true);
    expect(calls).to.deep.equal(['first', 'second']);
    clock.advance(1_000);
    expect((await eventually(async () => calls.length === 3, 2_000, 5)).ok).to.equal(true);
    expect(calls).to.deep.equal(['first', 'second', 'moved']);
  });
});
