// Reading svc_schedules, and the tick rows that make a tick start one run (svc_schedule_ticks, coordination state).
import type { Queryable } from '../db/pool.js';
import type { ScheduleKey } from './events.js';

export interface ScheduleRow {
  workflow: string;
  schedule_id: string;
  schema_version: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  paused: boolean;
  next_fire_at: string | null;
  last_fired_at: string | null;
  last_run_id: string | null;
  version: number;
}

const COLUMNS = 'workflow, schedule_id, schema_version, cron, timezone, enabled, paused, next_fire_at, last_fired_at, last_run_id, version';

export async function listSchedules(db: Queryable): Promise<ScheduleRow[]> {
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM svc_schedules ORDER BY workflow, schedule_id`);
  return rows;
}

export async function findSchedule(db: Queryable, { workflow, scheduleId }: ScheduleKey): Promise<ScheduleRow | undefined> {
  const { rows } = await db.query<ScheduleRow>(`SELECT ${COLUMNS} FROM svc_schedules WHERE workflow = $1 AND schedule_id = $2`, [workflow, scheduleId]);
  return rows[0];
}

/** Schedules whose next tick has come, on the partial index svc_schedules_due (oldest tick first). */
export async function dueSchedules(db: Queryable, now: Date, limit: number): Promise<ScheduleRow[]> {
  const { rows } = await db.query<ScheduleRow>(
    `SELECT ${COLUMNS} FROM svc_schedules WHERE enabled AND NOT paused AND next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2`,
    [now, limit],
  );
  return rows;
}

/** Whether a run is still going (a point read on svc_runs' key). */
export async function isRunGoing(db: Queryable, runId: string): Promise<boolean> {
  const { rows } = await db.query(`SELECT 1 FROM svc_runs WHERE id = $1 AND status NOT IN ('completed', 'failed', 'aborted')`, [runId]);
  return rows.length > 0;
}

export interface TickClaim {
  key: ScheduleKey;
  scheduledAt: Date;
  /** The run id if this claim creates the tick row. */
  runId: string;
  owner: string;
  now: Date;
  leaseMs: number;
}

/**
 * Takes the tick: creates its row (with `runId`), or takes over a row whose run was never seen started
 * and whose lease ran out. Answers the tick's run id, or undefined when another worker holds it or
 * its run started already.
 */
export async function claimTick(db: Queryable, { key, scheduledAt, runId, owner, now, leaseMs }: TickClaim): Promise<string | undefined> {
  const { rows } = await db.query<{ run_id: string }>(
    `INSERT INTO svc_schedule_ticks AS t (workflow, schedule_id, scheduled_at, run_id, owner, leased_until)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (workflow, schedule_id, scheduled_at) DO UPDATE SET owner = EXCLUDED.owner, leased_until = EXCLUDED.leased_until
       WHERE t.started_at IS NULL AND t.leased_until < $7
     RETURNING run_id`,
    [key.workflow, key.scheduleId, scheduledAt, runId, owner, new Date(now.getTime() + leaseMs), now],
  );
  return rows[0]?.run_id;
}

/** The tick's row as it stands: its run id, and whether that run was seen started. */
export async function findTick(db: Queryable, key: ScheduleKey, scheduledAt: Date): Promise<{ run_id: string; started_at: string | null } | undefined> {
  const { rows } = await db.query<{ run_id: string; started_at: string | null }>(
    'SELECT run_id, started_at FROM svc_schedule_ticks WHERE workflow = $1 AND schedule_id = $2 AND scheduled_at = $3',
    [key.workflow, key.scheduleId, scheduledAt],
  );
  return rows[0];
}

export async function markTickStarted(db: Queryable, key: ScheduleKey, scheduledAt: Date, now: Date): Promise<void> {
  await db.query(`UPDATE svc_schedule_ticks SET started_at = $4 WHERE workflow = $1 AND schedule_id = $2 AND scheduled_at = $3`, [
    key.workflow,
    key.scheduleId,
    scheduledAt,
    now,
  ]);
}

/** Ticks whose worker died before it saw their run start (on the partial index svc_schedule_ticks_unstarted). */
export async function abandonedTicks(db: Queryable, now: Date, limit: number): Promise<{ key: ScheduleKey; scheduledAt: Date }[]> {
  const { rows } = await db.query<{ workflow: string; schedule_id: string; scheduled_at: string }>(
    `SELECT workflow, schedule_id, scheduled_at FROM svc_schedule_ticks WHERE started_at IS NULL AND leased_until < $1 ORDER BY leased_until LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => ({ key: { workflow: r.workflow, scheduleId: r.schedule_id }, scheduledAt: new Date(r.scheduled_at) }));
}
