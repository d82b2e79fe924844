// svc_schedules: each schedule's definition as last declared, whether it is paused, and its next and last tick.
import type { RecordedEvent } from '../eventstore/types.js';
import { defineProjection, type Row } from '../projections/types.js';
import { SCHEDULE_EVENT_TYPES, type ScheduleEvent } from './events.js';

/** The columns an event changes (besides version and updated_at). */
function changesOf(event: ScheduleEvent): Row {
  switch (event.type) {
    case 'schedule_defined': {
      const { schema_version, cron, timezone, next_fire_at } = event.data;
      return { schema_version, cron, timezone, next_fire_at, enabled: true };
    }
    case 'schedule_disabled':
      return { enabled: false };
    case 'schedule_fired':
      return { last_fired_at: event.data.scheduled_at, last_run_id: event.data.run_id, next_fire_at: event.data.next_fire_at };
    case 'schedule_skipped':
      return { next_fire_at: event.data.next_fire_at };
    case 'schedule_paused':
      return { paused: true };
    case 'schedule_resumed':
      return { paused: false, next_fire_at: event.data.next_fire_at };
    case 'schedule_run_requested':
      return { last_run_id: event.data.run_id };
    case 'schedule_backfilled':
      return {};
    default: {
      const unknown: never = event;
      throw new Error(`unhandled schedule event ${(unknown as { type: string }).type}`);
    }
  }
}

export const schedulesProjection = defineProjection({
  name: 'svc_schedules',
  version: 1,
  table: 'svc_schedules',
  key: ['workflow', 'schedule_id'],
  eventTypes: SCHEDULE_EVENT_TYPES,
  keysOf(event: RecordedEvent) {
    const { workflow, schedule_id } = event.data as { workflow: string; schedule_id: string };
    return [{ workflow, schedule_id }];
  },
  evolve(row: Row | null, key, event): Row | null {
    const typed = { type: event.type, data: event.data } as ScheduleEvent;
    // A schedule exists from its first definition; anything before it has no row to change.
    if (!row && typed.type !== 'schedule_defined') return null;
    const base: Row = row ?? { ...key, paused: false, last_fired_at: null, last_run_id: null };
    return { ...base, ...changesOf(typed), version: event.streamPosition, updated_at: typed.data.at };
  },
});
