// Schedule tests' shared pieces: the fixture project (with extra every-second workflows written on top), and
// readers of scheduled runs, tick rows and schedule events straight from the database.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { copyProject } from '../support/projects.js';

/** nodes `note` and `linger`, and `ticks`: every second, input {note: tick}, also triggered over HTTP. */
export const PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'project');

/** A workflow `name` with one schedule `each_second` (plus `keys`, YAML flow mapping entries) and one step. */
export function scheduledWorkflow(name: string, keys = '', step = '{id: note, kind: Functional, runner: note}', cron = '* * * * * *'): string {
  return `kind: Workflow
metadata: {name: ${name}, schema_version: v1}
spec:
  trigger:
    schedule:
      - {id: each_second, cron: "${cron}"${keys ? `, ${keys}` : ''}}
  steps:
    - ${step}
`;
}

/** A private copy of the fixture project with these workflows (name -> YAML) added. */
export function projectWith(workflows: Record<string, string>): string {
  return copyProject(PROJECT, Object.fromEntries(Object.entries(workflows).map(([name, text]) => [`workflows/${name}.yaml`, text])));
}

export interface ScheduledRun {
  id: string;
  scheduled_at: string;
  status: string;
  created_at: string;
  updated_at: string;
}

/** Runs of `workflow` a schedule started, by tick. */
export async function scheduledRuns(db: pg.Pool, workflow: string): Promise<ScheduledRun[]> {
  const { rows } = await db.query<ScheduledRun>(
    `SELECT id, trigger->>'scheduled_at' AS scheduled_at, status, created_at, updated_at FROM svc_runs
     WHERE workflow = $1 AND trigger->>'type' = 'schedule' ORDER BY trigger->>'scheduled_at', created_at`,
    [workflow],
  );
  return rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString() }));
}

/** How many run_started events each tick of `workflow` has in the journal (more than one would be a second run). */
export async function runStartsByTick(db: pg.Pool, workflow: string): Promise<Map<string, number>> {
  const { rows } = await db.query<{ tick: string; n: number }>(
    `SELECT data->'payload'->'schedule'->>'scheduled_at' AS tick, count(*)::int AS n FROM events
     WHERE type = 'run_started' AND data->'payload'->>'workflow' = $1 AND data->'payload'->>'trigger' = 'schedule' GROUP BY 1`,
    [workflow],
  );
  return new Map(rows.map((r) => [r.tick, r.n]));
}

export interface StoredScheduleEvent {
  type: string;
  data: Record<string, any>;
  metadata: Record<string, any>;
}

export async function scheduleEvents(db: pg.Pool, workflow: string, scheduleId = 'each_second'): Promise<StoredScheduleEvent[]> {
  const { rows } = await db.query<StoredScheduleEvent>('SELECT type, data, metadata FROM events WHERE stream_id = $1 ORDER BY stream_position', [
    `schedule-${workflow}/${scheduleId}`,
  ]);
  return rows;
}

/** Ticks between the first and last of `ticks` that no run has (every-second schedules). */
export function gapsIn(ticks: string[]): string[] {
  const times = ticks.map((t) => Date.parse(t)).sort((a, b) => a - b);
  const gaps: string[] = [];
  for (let i = 1; i < times.length; i++) for (let t = times[i - 1]! + 1000; t < times[i]!; t += 1000) gaps.push(new Date(t).toISOString());
  return gaps;
}
