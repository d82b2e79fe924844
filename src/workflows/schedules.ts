// Schedules under spec.trigger.schedule: their typed shape, their V-codes (V030..V036), and cron
// arithmetic with croner in IANA time zones (DST gaps and repeats as croner defines them).
import { Cron } from 'croner';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';

/** findings.ts's Add, for errors (not imported: findings.ts depends on definition.ts, which reads schedules here). */
type Add = (code: string, severity: 'error', message: string) => void;

export const OVERLAPS = ['skip', 'allow'] as const;
export const CATCHUPS = ['none', 'latest', 'all'] as const;
/** At most this many missed ticks start runs with `catchup: all`; older ones are skipped. */
export const CATCHUP_ALL_LIMIT = 100;
const SCHEDULE_KEYS = new Set(['id', 'cron', 'timezone', 'input', 'overlap', 'catchup']);
const SCHEDULE_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

export interface ScheduleDefinition {
  id: string;
  cron: string;
  timezone: string;
  input: JsonObject;
  overlap: (typeof OVERLAPS)[number];
  catchup: (typeof CATCHUPS)[number];
}

/** Reads spec.trigger.schedule leniently; `validateSchedules` reports what is wrong with it. */
export function toSchedules(value: unknown): ScheduleDefinition[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw) => {
    if (typeof raw !== 'object' || raw === null || typeof raw.id !== 'string' || typeof raw.cron !== 'string') return [];
    const entry = raw as Record<string, unknown>;
    return [
      {
        id: String(entry.id),
        cron: String(entry.cron),
        timezone: typeof entry.timezone === 'string' ? entry.timezone : 'UTC',
        input: typeof entry.input === 'object' && entry.input !== null && !Array.isArray(entry.input) ? (entry.input as JsonObject) : {},
        overlap: entry.overlap === 'allow' ? 'allow' : 'skip',
        catchup: entry.catchup === 'none' || entry.catchup === 'all' ? entry.catchup : 'latest',
      },
    ];
  });
}

/** The cron of a schedule in its zone; throws on a bad expression or zone. */
export function cronOf(cron: string, timezone: string): Cron {
  if (!isTimeZone(timezone)) throw new RangeError(`unknown time zone ${timezone}`);
  return new Cron(cron, { timezone, mode: '5-or-6-parts', paused: true });
}

/** The first tick strictly after `after` (null: the expression never fires again). */
export function nextTick(cron: string, timezone: string, after: Date): Date | null {
  return cronOf(cron, timezone).nextRun(after);
}

/** The ticks in [from, to], oldest first, at most `limit` (one more tells the caller the window was too big). */
export function ticksBetween(cron: string, timezone: string, from: Date, to: Date, limit: number): Date[] {
  const schedule = cronOf(cron, timezone);
  const ticks: Date[] = [];
  for (let tick = schedule.nextRun(new Date(from.getTime() - 1)); tick && tick <= to && ticks.length < limit; tick = schedule.nextRun(tick)) ticks.push(tick);
  return ticks;
}

/** The latest `count` ticks strictly before `before`, oldest first. */
export function ticksBefore(cron: string, timezone: string, before: Date, count: number): Date[] {
  return cronOf(cron, timezone)
    .previousRuns(count, before)
    .filter((tick) => tick < before)
    .reverse();
}

export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** V030 shape, V031 cron, V032 time zone, V033 overlap, V034 catchup, V035 duplicate id (V036, the input: validateScheduleInputs). */
export function validateSchedules(value: unknown, add: Add): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) return add('V030', 'error', 'spec.trigger.schedule must be a list of schedules');
  const seen = new Set<string>();
  value.forEach((raw, index) => {
    const at = `spec.trigger.schedule[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return add('V030', 'error', `${at} must be a mapping`);
    const entry = raw as Record<string, unknown>;
    Object.keys(entry)
      .filter((key) => !SCHEDULE_KEYS.has(key))
      .forEach((key) => add('V030', 'error', `unknown key ${at}.${key}`));
    if (typeof entry.id !== 'string' || !SCHEDULE_ID.test(entry.id)) add('V030', 'error', `${at}.id must match ${SCHEDULE_ID.source}`);
    else if (seen.has(entry.id)) add('V035', 'error', `schedule id ${entry.id} is used twice`);
    else seen.add(entry.id);
    if (entry.input !== undefined && (typeof entry.input !== 'object' || entry.input === null || Array.isArray(entry.input)))
      add('V030', 'error', `${at}.input must be a mapping`);
    const timezone = entry.timezone ?? 'UTC';
    const isZone = typeof timezone === 'string' && isTimeZone(timezone);
    if (!isZone) add('V032', 'error', `${at}.timezone ${JSON.stringify(timezone)} is not an IANA time zone`);
    const cronProblem = typeof entry.cron === 'string' ? problemOfCron(entry.cron) : 'is missing';
    if (cronProblem) add('V031', 'error', `${at}.cron ${cronProblem}`);
    if (entry.overlap !== undefined && !(OVERLAPS as readonly unknown[]).includes(entry.overlap))
      add('V033', 'error', `${at}.overlap must be one of ${OVERLAPS.join(', ')}`);
    if (entry.catchup !== undefined && !(CATCHUPS as readonly unknown[]).includes(entry.catchup))
      add('V034', 'error', `${at}.catchup must be one of ${CATCHUPS.join(', ')}`);
  });
}

/** V036: a schedule's input its workflow's input_schema refuses (none of its runs could start). */
export function validateScheduleInputs(schedules: readonly ScheduleDefinition[], inputSchema: object, add: Add): void {
  if (schedules.length === 0) return;
  const validator = compileValidator(inputSchema, 'body');
  for (const { id, input } of schedules) {
    const issues = validator.issues(input);
    if (issues.length > 0)
      add('V036', 'error', `schedule ${id}: its input does not match input_schema: ${issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ')}`);
  }
}

function problemOfCron(cron: string): string | null {
  try {
    cronOf(cron, 'UTC');
    return null;
  } catch (error) {
    return `is not a cron expression of 5 or 6 fields: ${(error as Error).message}`;
  }
}
