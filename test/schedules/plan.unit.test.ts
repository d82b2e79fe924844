// Schedule arithmetic without I/O: croner's fire times across daylight saving changes, and the ticker's plan per catchup and overlap.
import { expect } from 'chai';
import { planTick } from '../../src/schedules/plan.js';
import { nextTick, ticksBetween, type ScheduleDefinition } from '../../src/workflows/schedules.js';

const iso = (dates: (Date | null)[]) => dates.map((d) => d?.toISOString() ?? null);
const at = (text: string) => new Date(text);

describe('schedule fire times (croner, IANA zones)', () => {
  it('a daily 03:00 in Europe/Paris keeps 03:00 local across the March change (UTC+1 -> UTC+2)', () => {
    expect(iso(ticksBetween('0 3 * * *', 'Europe/Paris', at('2026-03-27T12:00:00Z'), at('2026-03-31T00:00:00Z'), 10))).to.deep.equal([
      '2026-03-28T02:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T01:00:00.000Z',
    ]);
  });

  it('02:30 that does not exist on 29 March runs at the first valid time after the gap (03:00 CEST)', () => {
    expect(iso(ticksBetween('30 2 * * *', 'Europe/Paris', at('2026-03-27T12:00:00Z'), at('2026-03-31T00:00:00Z'), 10))).to.deep.equal([
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
    ]);
  });

  it('02:30 that happens twice on 25 October runs once, at its first occurrence (CEST)', () => {
    expect(iso(ticksBetween('30 2 * * *', 'Europe/Paris', at('2026-10-23T12:00:00Z'), at('2026-10-27T00:00:00Z'), 10))).to.deep.equal([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('an hourly schedule skips the hour the March gap removes and runs both 02:00 of October', () => {
    expect(iso(ticksBetween('0 * * * *', 'Europe/Paris', at('2026-03-28T23:30:00Z'), at('2026-03-29T02:00:00Z'), 10))).to.deep.equal([
      '2026-03-29T00:00:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T02:00:00.000Z',
    ]);
    expect(iso(ticksBetween('0 * * * *', 'Europe/Paris', at('2026-10-24T23:30:00Z'), at('2026-10-25T02:00:00Z'), 10))).to.deep.equal([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ]);
  });

  it('six fields fire by the second; the next tick is strictly after the reference', () => {
    expect(iso([nextTick('*/15 * * * * *', 'UTC', at('2026-01-01T00:00:15.000Z'))])).to.deep.equal(['2026-01-01T00:00:30.000Z']);
    expect(ticksBetween('* * * * * *', 'UTC', at('2026-01-01T00:00:00Z'), at('2026-01-01T01:00:00Z'), 1001)).to.have.length(1001);
  });
});

describe('planTick', () => {
  const every = (catchup: ScheduleDefinition['catchup'], overlap: ScheduleDefinition['overlap'] = 'allow') => ({
    cron: '* * * * * *',
    timezone: 'UTC',
    catchup,
    overlap,
  });
  const lateBefore = at('2026-01-01T01:00:00.000Z');
  const longAgo = at('2026-01-01T00:00:00.000Z');

  it('fires a tick on time, whatever the catchup', () => {
    for (const catchup of ['none', 'latest', 'all'] as const) {
      const step = planTick({ definition: every(catchup), due: at('2026-01-01T01:00:01Z'), lateBefore, isPreviousRunning: false });
      expect(step).to.deep.equal({ kind: 'fire', scheduledAt: at('2026-01-01T01:00:01Z'), next: at('2026-01-01T01:00:02Z') });
    }
  });

  it('none skips every missed tick, to the first one on time', () => {
    const step = planTick({ definition: every('none'), due: longAgo, lateBefore, isPreviousRunning: false });
    expect(step).to.deep.equal({ kind: 'skip', from: longAgo, reason: 'catchup', next: lateBefore });
  });

  it('latest skips to the latest missed tick, then fires it', () => {
    const step = planTick({ definition: every('latest'), due: longAgo, lateBefore, isPreviousRunning: false });
    expect(step).to.deep.equal({ kind: 'skip', from: longAgo, reason: 'catchup', next: at('2026-01-01T00:59:59Z') });
    const then = planTick({ definition: every('latest'), due: at('2026-01-01T00:59:59Z'), lateBefore, isPreviousRunning: false });
    expect(then).to.deep.equal({ kind: 'fire', scheduledAt: at('2026-01-01T00:59:59Z'), next: lateBefore });
  });

  it('all fires each missed tick, at most the latest 100', () => {
    const step = planTick({ definition: every('all'), due: longAgo, lateBefore, isPreviousRunning: false });
    expect(step).to.deep.equal({ kind: 'skip', from: longAgo, reason: 'catchup', next: at('2026-01-01T00:58:20Z') });
    const then = planTick({ definition: every('all'), due: at('2026-01-01T00:58:20Z'), lateBefore, isPreviousRunning: false });
    expect(then).to.deep.equal({ kind: 'fire', scheduledAt: at('2026-01-01T00:58:20Z'), next: at('2026-01-01T00:58:21Z') });
    const few = planTick({ definition: every('all'), due: at('2026-01-01T00:59:30Z'), lateBefore, isPreviousRunning: false });
    expect(few.kind).to.equal('fire');
  });

  it('overlap: skip passes over a tick while the previous run goes on; allow fires it', () => {
    const due = at('2026-01-01T01:00:01Z');
    expect(planTick({ definition: every('latest', 'skip'), due, lateBefore, isPreviousRunning: true })).to.deep.equal({
      kind: 'skip',
      from: due,
      reason: 'overlap',
      next: at('2026-01-01T01:00:02Z'),
    });
    expect(planTick({ definition: every('latest', 'allow'), due, lateBefore, isPreviousRunning: true }).kind).to.equal('fire');
  });
});
