// What an admin does to a schedule: pause or resume it, run it now, backfill a window of its ticks. Each is an event naming who and when.
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { BadRequestError, ConflictError, NotFoundError, VersionConflictError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { SettledRun } from '../runs/trigger/startRun.js';
import type { RunStarter } from '../runs/trigger/startRun.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { ticksBetween } from '../workflows/schedules.js';
import { decidePause } from './decide.js';
import { scheduleEvent, scheduleStream, type ScheduleEvent, type ScheduleKey } from './events.js';
import { declaredSchedule, type DeclaredHere, type TickFirer } from './fire.js';
import { findSchedule, type ScheduleRow } from './queries.js';

/** At most this many ticks per backfill. */
export const BACKFILL_LIMIT = 1000;
const PAUSE_RETRIES = 5;
const BACKFILL_CONCURRENCY = 16;

export interface ScheduleCommandDeps {
  store: EventStore;
  workflows: WorkflowRegistry;
  starter: RunStarter;
  firer: TickFirer;
  clock: Clock;
}

export class ScheduleCommands {
  constructor(private readonly deps: ScheduleCommandDeps) {}

  get pool() {
    return this.deps.store.pool;
  }

  async find(key: ScheduleKey): Promise<ScheduleRow> {
    const row = await findSchedule(this.deps.store.pool, key);
    if (!row) throw new NotFoundError(`Schedule ${key.scheduleId} of workflow ${key.workflow} not found`);
    return row;
  }

  /** Sets `paused`; a lost race with the ticker reads the schedule again. */
  async setPaused(key: ScheduleKey, paused: boolean, by: string, metadata: EventMetadata): Promise<ScheduleRow> {
    for (let attempt = 0; ; attempt++) {
      const row = await this.find(key);
      const events = decidePause(row, paused, by, this.deps.clock.now());
      try {
        if (events.length > 0) await this.append(key, row.version, events, metadata);
        return await this.find(key);
      } catch (error) {
        if (!(error instanceof VersionConflictError) || attempt >= PAUSE_RETRIES) throw error;
      }
    }
  }

  /** One run now (a paused schedule too), outside the ticks: it waits for the run within the sync timeout. */
  async runNow(key: ScheduleKey, by: string, metadata: EventMetadata): Promise<SettledRun> {
    const { workflow, schedule } = await this.declared(key);
    const now = this.deps.clock.now();
    const runId = newId();
    const trigger = { type: 'schedule' as const, schedule_id: schedule.id, scheduled_at: now.toISOString() };
    const started = await this.deps.starter.startScheduled({ workflow, input: schedule.input, runId, schedule: trigger }, true);
    const of = { workflow: key.workflow, schedule_id: key.scheduleId, by, at: now.toISOString() };
    await this.append(key, 'any', [scheduleEvent('schedule_run_requested', { ...of, run_id: runId })], metadata);
    return started;
  }

  /** One run per past tick in [from, to] that has none yet; ticks another worker holds right now count as having one. */
  async backfill(key: ScheduleKey, from: Date, to: Date, by: string, metadata: EventMetadata): Promise<string[]> {
    const declared = await this.declared(key);
    const now = this.deps.clock.now();
    if (from > to) throw new BadRequestError('from must not be after to');
    if (to > now) throw new BadRequestError('a backfill covers past ticks only: to must not be in the future');
    const { cron, timezone } = declared.schedule;
    const ticks = ticksBetween(cron, timezone, from, to, BACKFILL_LIMIT + 1);
    if (ticks.length > BACKFILL_LIMIT) throw new BadRequestError(`the window holds more than ${BACKFILL_LIMIT} ticks; backfill it in parts`);
    const fired: (string | undefined)[] = new Array(ticks.length);
    // A few starts at once share the run group commit; the answer keeps the ticks' order.
    let nextIndex = 0;
    const worker = async () => {
      for (let index = nextIndex++; index < ticks.length; index = nextIndex++) {
        const outcome = await this.deps.firer.fire(key, declared.workflow, declared.schedule, ticks[index]!);
        if (outcome.kind === 'fired') fired[index] = outcome.runId;
      }
    };
    await Promise.all(Array.from({ length: BACKFILL_CONCURRENCY }, worker));
    const runs = fired.filter((id): id is string => id !== undefined);
    const of = { workflow: key.workflow, schedule_id: key.scheduleId, by, at: now.toISOString() };
    await this.append(key, 'any', [scheduleEvent('schedule_backfilled', { ...of, from: from.toISOString(), to: to.toISOString(), runs })], metadata);
    return runs;
  }

  /** The schedule as the serving version declares it: a disabled one starts nothing. */
  private async declared(key: ScheduleKey): Promise<DeclaredHere> {
    const row = await this.find(key);
    const declared = row.enabled ? declaredSchedule(this.deps.workflows, key.workflow, key.scheduleId, row.schema_version) : undefined;
    if (!declared) throw new ConflictError(`Schedule ${key.scheduleId} of workflow ${key.workflow} is not declared by an enabled version`);
    return declared;
  }

  private async append(key: ScheduleKey, expectedVersion: number | 'any', events: ScheduleEvent[], metadata: EventMetadata): Promise<void> {
    await this.deps.store.append({ streamId: scheduleStream(key), expectedVersion, events }, { metadata });
  }
}
