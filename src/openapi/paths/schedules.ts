// The schedule administration route family (/admin/schedules).
// shape: an OpenAPI operation table: one function per route family reads as the API does; splitting it would scatter it.
import { bool, object, operation, ref, str, uuid, type PathItem, type Schema } from '../builders.js';

const nullableTime: Schema = { type: ['string', 'null'], format: 'date-time' };

export function schedulePaths(): Record<string, PathItem> {
  const tags = ['Schedules'];
  const scope = 'iam:admin';
  const schedule = object(
    {
      workflow: str,
      schema_version: str,
      id: str,
      cron: str,
      timezone: str,
      enabled: bool,
      paused: bool,
      next_fire_at: nullableTime,
      last_fired_at: nullableTime,
      last_run_id: { type: ['string', 'null'], format: 'uuid' },
    },
    ['workflow', 'schema_version', 'id', 'cron', 'timezone', 'paused', 'next_fire_at', 'last_fired_at', 'last_run_id'],
  );
  const path = ['workflow', 'id'];
  return {
    '/admin/schedules': {
      get: operation({
        operationId: 'listSchedules',
        summary: 'Every schedule the serving workflow versions declare (and those no enabled version declares any more)',
        tags,
        scope,
        deploymentAdmin: true,
        ok: { status: 200, description: 'Schedules', schema: { type: 'array', items: schedule } },
        errors: [403],
      }),
    },
    '/admin/schedules/{workflow}/{id}': {
      patch: operation({
        operationId: 'pauseSchedule',
        summary: 'Pause or resume a schedule (a resume fires from the next tick; missed ticks are not caught up)',
        tags,
        scope,
        deploymentAdmin: true,
        path,
        body: object({ paused: bool }, ['paused']),
        ok: { status: 200, description: 'The schedule', schema: schedule },
        errors: [403, 404],
      }),
    },
    '/admin/schedules/{workflow}/{id}/run': {
      post: operation({
        operationId: 'runScheduleNow',
        summary: "One run now with the schedule's input (outside its ticks; a paused schedule too)",
        tags,
        scope,
        deploymentAdmin: true,
        path,
        ok: { status: 201, description: 'The run ended within the sync timeout', schema: ref('Run') },
        errors: [403, 404, 409],
        extraResponses: { 202: { description: 'The run goes on', content: { 'application/json': { schema: ref('Run') } } } },
      }),
    },
    '/admin/schedules/{workflow}/{id}/backfill': {
      post: operation({
        operationId: 'backfillSchedule',
        summary: 'One run per past tick in [from, to] that has none yet (at most 1000 ticks)',
        tags,
        scope,
        deploymentAdmin: true,
        path,
        body: object({ from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } }, ['from', 'to']),
        ok: { status: 200, description: 'The runs started', schema: object({ runs: { type: 'array', items: uuid } }, ['runs']) },
        errors: [400, 403, 404, 409],
      }),
    },
  };
}
