// /admin/schedules: list every schedule, pause or resume one, run one now, backfill a window (deployment admins).
import { Router, type Request } from 'express';
import type { Schedule } from '../contract/types.js';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { compileValidator } from '../kernel/validation.js';
import { descriptorOfState } from '../runs/present.js';
import { isTerminal } from '../runs/state.js';
import type { ScheduleKey } from './events.js';
import type { ScheduleRow } from './queries.js';
import { listSchedules } from './queries.js';
import type { ScheduleCommands } from './service.js';

const pauseBody = compileValidator<{ paused: boolean }>({
  type: 'object',
  properties: { paused: { type: 'boolean' } },
  required: ['paused'],
  additionalProperties: false,
});

const backfillBody = compileValidator<{ from: string; to: string }>({
  type: 'object',
  properties: { from: { type: 'string', format: 'date-time' }, to: { type: 'string', format: 'date-time' } },
  required: ['from', 'to'],
  additionalProperties: false,
});

export interface ScheduleAdminDeps {
  commands: ScheduleCommands;
  authenticator: Authenticator;
}

/** A schedule as GET /admin/schedules lists it. */
export function scheduleRecord(row: ScheduleRow): Schedule {
  return {
    workflow: row.workflow,
    schema_version: row.schema_version,
    id: row.schedule_id,
    cron: row.cron,
    timezone: row.timezone,
    enabled: row.enabled,
    paused: row.paused,
    next_fire_at: row.enabled && !row.paused ? row.next_fire_at : null,
    last_fired_at: row.last_fired_at,
    last_run_id: row.last_run_id,
  };
}

const keyOf = (req: Request): ScheduleKey => ({ workflow: String(req.params.workflow), scheduleId: String(req.params.id) });
const byOf = (req: Request) => req.principal?.userId ?? 'unknown';

/**
 * @example
 * app.use(scheduleAdminRouter({ commands, authenticator }));
 */
export function scheduleAdminRouter({ commands, authenticator }: ScheduleAdminDeps): Router {
  const router = Router();
  const admin = authenticator.requireDeploymentAdmin('schedules start runs for the whole deployment');
  const base = '/admin/schedules/:workflow/:id';

  router.get('/admin/schedules', admin, async (_req, res) => {
    res.json((await listSchedules(commands.pool)).map(scheduleRecord));
  });

  router.patch(base, admin, async (req, res) => {
    const key = keyOf(req);
    await commands.find(key);
    const { paused } = pauseBody.parse(req.body ?? {});
    res.json(scheduleRecord(await commands.setPaused(key, paused, byOf(req), requestMetadata(req))));
  });

  router.post(`${base}/run`, admin, async (req, res) => {
    const { runId, state } = await commands.runNow(keyOf(req), byOf(req), requestMetadata(req));
    res.setHeader('X-Svc-Run-Id', runId);
    res.status(isTerminal(state.status) ? 201 : 202).json(descriptorOfState(state));
  });

  router.post(`${base}/backfill`, admin, async (req, res) => {
    const key = keyOf(req);
    await commands.find(key);
    const { from, to } = backfillBody.parse(req.body ?? {});
    res.json({ runs: await commands.backfill(key, new Date(from), new Date(to), byOf(req), requestMetadata(req)) });
  });

  return router;
}
