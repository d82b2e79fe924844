// Schedule events, on one `schedule-<workflow>/<id>` stream per schedule; `by` and `at` say who and when.
import type { JsonObject } from '../kernel/json.js';

type Of = { workflow: string; schedule_id: string; at: string };

export type ScheduleEventData = {
  /** The serving version declares the schedule (again, or with a new cron): it fires from next_fire_at. */
  schedule_defined: Of & { schema_version: string; cron: string; timezone: string; next_fire_at: string | null };
  /** No enabled version declares it any more: it fires nothing until one does. */
  schedule_disabled: Of;
  schedule_fired: Of & { scheduled_at: string; run_id: string; next_fire_at: string | null };
  /** Ticks from `from` up to next_fire_at start no run: missed while no worker ran (catchup) or the previous run still ran (overlap). */
  schedule_skipped: Of & { from: string; reason: 'catchup' | 'overlap'; next_fire_at: string | null };
  schedule_paused: Of & { by: string };
  schedule_resumed: Of & { by: string; next_fire_at: string | null };
  schedule_run_requested: Of & { by: string; run_id: string };
  schedule_backfilled: Of & { by: string; from: string; to: string; runs: string[] };
};

export type ScheduleEventType = keyof ScheduleEventData;
export type ScheduleEvent = { [T in ScheduleEventType]: { type: T; data: ScheduleEventData[T] & JsonObject } }[ScheduleEventType];

export const SCHEDULE_EVENT_TYPES: readonly ScheduleEventType[] = [
  'schedule_defined',
  'schedule_disabled',
  'schedule_fired',
  'schedule_skipped',
  'schedule_paused',
  'schedule_resumed',
  'schedule_run_requested',
  'schedule_backfilled',
];

export interface ScheduleKey {
  workflow: string;
  scheduleId: string;
}

export const scheduleStream = ({ workflow, scheduleId }: ScheduleKey) => `schedule-${workflow}/${scheduleId}`;

export function scheduleEvent<T extends ScheduleEventType>(type: T, data: ScheduleEventData[T]): ScheduleEvent {
  return { type, data } as ScheduleEvent;
}
