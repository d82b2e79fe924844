// The schedule admin calls (`/admin/schedules`, deployment admins only): list, pause or resume, run now, backfill.
import type { RunDescriptor, Schedule, ScheduleBackfill } from '../contract/types.js';
import type { HttpCore } from './http.js';

/** A backfill's window, both ends included: `Date`s or RFC 3339 strings (at most 1000 ticks). */
export interface BackfillWindow {
  from: Date | string;
  to: Date | string;
}

/**
 * @example
 * const schedules = scheduleAdmin(http);
 * await schedules.pause('report', 'nightly');
 */
export function scheduleAdmin(http: HttpCore) {
  const path = (workflow: string, id: string) => `/admin/schedules/${encodeURIComponent(workflow)}/${encodeURIComponent(id)}`;
  const setPaused = (workflow: string, id: string, paused: boolean): Promise<Schedule> => http.json(path(workflow, id), { method: 'PATCH', body: { paused } });
  const iso = (at: Date | string) => (at instanceof Date ? at.toISOString() : at);
  return {
    list: (): Promise<Schedule[]> => http.json('/admin/schedules'),
    pause: (workflow: string, id: string): Promise<Schedule> => setPaused(workflow, id, true),
    resume: (workflow: string, id: string): Promise<Schedule> => setPaused(workflow, id, false),
    /** One run now, as a tick of the schedule: its descriptor, ended (201) or still going (202). */
    run: (workflow: string, id: string): Promise<RunDescriptor> => http.json(`${path(workflow, id)}/run`, { method: 'POST' }),
    /** One run per tick of the window that has none yet. */
    backfill: (workflow: string, id: string, window: BackfillWindow): Promise<ScheduleBackfill> =>
      http.json(`${path(workflow, id)}/backfill`, { method: 'POST', body: { from: iso(window.from), to: iso(window.to) } }),
  };
}
