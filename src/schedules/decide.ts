// Schedule decisions (pure): which definitions the log must learn of, and pausing or resuming.
import { nextTick, type ScheduleDefinition } from '../workflows/schedules.js';
import { scheduleEvent, type ScheduleEvent, type ScheduleKey } from './events.js';
import type { ScheduleRow } from './queries.js';

/** A schedule the serving version of an enabled workflow declares. */
export interface DeclaredSchedule {
  workflow: string;
  schemaVersion: string;
  schedule: ScheduleDefinition;
}

export interface ScheduleAppend {
  key: ScheduleKey;
  expectedVersion: number;
  event: ScheduleEvent;
}

const keyOf = (workflow: string, scheduleId: string) => `${workflow}\n${scheduleId}`;
const isoOrNull = (date: Date | null) => date?.toISOString() ?? null;

/**
 * A schedule declared anew (first seen, enabled again, or a new version or cron) is defined; one no
 * enabled version declares any more is disabled. An unchanged cron in a new version keeps its next
 * tick; anything else fires from the first tick after `now` (a re-enabled one does not catch up).
 */
export function decideDefinitions(declared: readonly DeclaredSchedule[], rows: readonly ScheduleRow[], now: Date): ScheduleAppend[] {
  const byKey = new Map(rows.map((row) => [keyOf(row.workflow, row.schedule_id), row]));
  const at = now.toISOString();
  const appends: ScheduleAppend[] = [];
  for (const { workflow, schemaVersion, schedule } of declared) {
    const row = byKey.get(keyOf(workflow, schedule.id));
    byKey.delete(keyOf(workflow, schedule.id));
    const { cron, timezone } = schedule;
    const isSameCron = row !== undefined && row.enabled && row.cron === cron && row.timezone === timezone;
    if (isSameCron && row.schema_version === schemaVersion) continue;
    const next = isSameCron ? row.next_fire_at : isoOrNull(nextTick(cron, timezone, now));
    appends.push({
      key: { workflow, scheduleId: schedule.id },
      expectedVersion: row?.version ?? 0,
      event: scheduleEvent('schedule_defined', { workflow, schedule_id: schedule.id, schema_version: schemaVersion, cron, timezone, next_fire_at: next, at }),
    });
  }
  for (const row of byKey.values()) {
    if (!row.enabled) continue;
    appends.push({
      key: { workflow: row.workflow, scheduleId: row.schedule_id },
      expectedVersion: row.version,
      event: scheduleEvent('schedule_disabled', { workflow: row.workflow, schedule_id: row.schedule_id, at }),
    });
  }
  return appends;
}

/** Pausing a paused schedule (or resuming a running one) changes nothing; a resume fires from the next tick on. */
export function decidePause(row: ScheduleRow, paused: boolean, by: string, now: Date): ScheduleEvent[] {
  if (row.paused === paused) return [];
  const of = { workflow: row.workflow, schedule_id: row.schedule_id, by, at: now.toISOString() };
  if (paused) return [scheduleEvent('schedule_paused', of)];
  return [scheduleEvent('schedule_resumed', { ...of, next_fire_at: isoOrNull(nextTick(row.cron, row.timezone, now)) })];
}
