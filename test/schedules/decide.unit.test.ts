// Schedule decisions without I/O: which definitions the log learns of, and pausing or resuming.
import { expect } from 'chai';
import { decideDefinitions, decidePause, type DeclaredSchedule } from '../../src/schedules/decide.js';
import type { ScheduleRow } from '../../src/schedules/queries.js';

const now = new Date('2026-01-01T10:20:30.500Z');
const hourly = { id: 'hourly', cron: '0 * * * *', timezone: 'UTC', input: {}, overlap: 'skip', catchup: 'latest' } as const;
const declared = (schemaVersion = 'v1', schedule: DeclaredSchedule['schedule'] = hourly): DeclaredSchedule => ({ workflow: 'w', schemaVersion, schedule });
const row = (fields: Partial<ScheduleRow> = {}): ScheduleRow => ({
  workflow: 'w',
  schedule_id: 'hourly',
  schema_version: 'v1',
  cron: '0 * * * *',
  timezone: 'UTC',
  enabled: true,
  paused: false,
  next_fire_at: '2026-01-01T09:00:00.000Z',
  last_fired_at: null,
  last_run_id: null,
  version: 7,
  ...fields,
});
const typesAndData = (appends: ReturnType<typeof decideDefinitions>) =>
  appends.map((a) => ({ v: a.expectedVersion, type: a.event.type, next: (a.event.data as any).next_fire_at }));

describe('decideDefinitions', () => {
  it('defines a schedule seen for the first time from the first tick after now', () => {
    expect(typesAndData(decideDefinitions([declared()], [], now))).to.deep.equal([{ v: 0, type: 'schedule_defined', next: '2026-01-01T11:00:00.000Z' }]);
  });

  it('leaves an unchanged schedule alone, and keeps the next tick of a new version with the same cron', () => {
    expect(decideDefinitions([declared()], [row()], now)).to.deep.equal([]);
    expect(typesAndData(decideDefinitions([declared('v2')], [row()], now))).to.deep.equal([
      { v: 7, type: 'schedule_defined', next: '2026-01-01T09:00:00.000Z' },
    ]);
  });

  it('a new cron, or a schedule enabled again, fires from the next tick without catching up', () => {
    const everyMinute = { ...hourly, cron: '* * * * *' };
    expect(typesAndData(decideDefinitions([declared('v1', everyMinute)], [row()], now))).to.deep.equal([
      { v: 7, type: 'schedule_defined', next: '2026-01-01T10:21:00.000Z' },
    ]);
    expect(typesAndData(decideDefinitions([declared()], [row({ enabled: false })], now))).to.deep.equal([
      { v: 7, type: 'schedule_defined', next: '2026-01-01T11:00:00.000Z' },
    ]);
  });

  it('disables a schedule no enabled version declares, once', () => {
    expect(typesAndData(decideDefinitions([], [row()], now))).to.deep.equal([{ v: 7, type: 'schedule_disabled', next: undefined }]);
    expect(decideDefinitions([], [row({ enabled: false })], now)).to.deep.equal([]);
  });
});

describe('decidePause', () => {
  it('pauses and resumes once each; a resume fires from the next tick', () => {
    expect(decidePause(row(), true, 'u1', now).map((e) => e.type)).to.deep.equal(['schedule_paused']);
    expect(decidePause(row({ paused: true }), true, 'u1', now)).to.deep.equal([]);
    const [resumed] = decidePause(row({ paused: true }), false, 'u1', now);
    expect(resumed).to.deep.equal({
      type: 'schedule_resumed',
      data: { workflow: 'w', schedule_id: 'hourly', by: 'u1', at: now.toISOString(), next_fire_at: '2026-01-01T11:00:00.000Z' },
    });
  });
});
