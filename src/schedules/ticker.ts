// The schedule ticker, in every serving process: tells the log of declared schedules, then fires due
// ticks found on the due index. A tick starts at most one run whoever fires it (see fire.ts); a worker
// that dies holding one loses nothing: after the lease, the next worker starts its run under the same id.
import type { EventStore } from '../eventstore/store.js';
import type { Clock } from '../kernel/clock.js';
import { causationMetadata, withCausation, type Causation } from '../kernel/causation.js';
import { VersionConflictError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { decideDefinitions, type DeclaredSchedule } from './decide.js';
import { scheduleEvent, scheduleStream, type ScheduleEvent } from './events.js';
import { declaredSchedule, type TickFirer } from './fire.js';
import { planTick } from './plan.js';
import { abandonedTicks, dueSchedules, isRunGoing, listSchedules, type ScheduleRow } from './queries.js';

/** Who the ticker's events name. */
/** A tick no worker fired within this many claim intervals counts as missed (catchup decides). */
const ON_TIME_INTERVALS = 5;
/** Due schedules taken per query; rounds repeat while they make progress (a catchup of 100 ticks included). */
const BATCH = 50;
const MAX_ROUNDS = 250;

export interface TickerDeps {
  store: EventStore;
  workflows: WorkflowRegistry;
  firer: TickFirer;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
}

export class ScheduleTicker {
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private isStopped = false;

  constructor(private readonly deps: TickerDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), this.deps.intervalMs);
    this.timer.unref();
    void this.poll();
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    clearInterval(this.timer);
    await this.polling;
  }

  /** One pass; a pass still going makes this one wait for it instead. */
  poll(): Promise<void> {
    this.polling ??= this.pass().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pass(): Promise<void> {
    try {
      await this.declare();
      await this.recoverAbandoned();
      for (let round = 0; round < MAX_ROUNDS && !this.isStopped; round++) {
        const due = await dueSchedules(this.deps.store.pool, this.deps.clock.now(), BATCH);
        let progressed = false;
        for (const row of due) progressed = (await this.stepAlone(row)) || progressed;
        if (!progressed) break;
      }
    } catch (error) {
      // Nobody awaits a timer's pass: the database is likely away, and the next pass looks again.
      this.deps.logger.warn({ err: error }, 'schedule pass failed; trying again at the next interval');
    }
  }

  /** Every worker tells the log what its serving versions declare; the expected version makes one of them win. */
  private async declare(): Promise<void> {
    const declared: DeclaredSchedule[] = this.deps.workflows
      .activeAll()
      .flatMap((w) => w.trigger.schedules.map((schedule) => ({ workflow: w.name, schemaVersion: w.version, schedule })));
    const rows = await listSchedules(this.deps.store.pool);
    for (const { key, expectedVersion, event } of decideDefinitions(declared, rows, this.deps.clock.now())) {
      await this.append(key.workflow, key.scheduleId, expectedVersion, event);
    }
  }

  /** Ticks claimed by a worker that died before their run was seen started: started now, under their run id. */
  private async recoverAbandoned(): Promise<void> {
    for (const { key, scheduledAt } of await abandonedTicks(this.deps.store.pool, this.deps.clock.now(), BATCH)) {
      const found = declaredSchedule(this.deps.workflows, key.workflow, key.scheduleId);
      if (found)
        await withCausation(scheduleCausation(key.workflow, key.scheduleId), () => this.deps.firer.fire(key, found.workflow, found.schedule, scheduledAt));
    }
  }

  /** A schedule whose step fails (its run refused to start, say) holds up no other schedule; it is tried again next pass. */
  private async stepAlone(row: ScheduleRow): Promise<boolean> {
    try {
      return await this.step(row);
    } catch (error) {
      this.deps.logger.warn({ err: error, workflow: row.workflow, schedule: row.schedule_id }, 'a schedule tick failed; trying again at the next interval');
      return false;
    }
  }

  /** One step of one due schedule: fire its tick or skip ahead. False when there was nothing this worker could do. */
  private async step(row: ScheduleRow): Promise<boolean> {
    const found = declaredSchedule(this.deps.workflows, row.workflow, row.schedule_id, row.schema_version);
    if (!found || row.next_fire_at === null) return false;
    const { schedule } = found;
    const of = { workflow: row.workflow, schedule_id: row.schedule_id };
    const now = this.deps.clock.now();
    const isPreviousRunning = schedule.overlap === 'skip' && row.last_run_id !== null && (await isRunGoing(this.deps.store.pool, row.last_run_id));
    const lateBefore = new Date(now.getTime() - ON_TIME_INTERVALS * this.deps.intervalMs);
    const plan = planTick({ definition: schedule, due: new Date(row.next_fire_at), lateBefore, isPreviousRunning });
    const at = now.toISOString();
    const next = plan.next?.toISOString() ?? null;
    if (plan.kind === 'skip') {
      const skipped = scheduleEvent('schedule_skipped', { ...of, from: plan.from.toISOString(), reason: plan.reason, next_fire_at: next, at });
      return this.append(row.workflow, row.schedule_id, row.version, skipped);
    }
    const outcome = await withCausation(scheduleCausation(row.workflow, row.schedule_id), () =>
      this.deps.firer.fire({ workflow: row.workflow, scheduleId: row.schedule_id }, found.workflow, schedule, plan.scheduledAt),
    );
    if (outcome.kind === 'held') return false;
    const fired = scheduleEvent('schedule_fired', { ...of, scheduled_at: plan.scheduledAt.toISOString(), run_id: outcome.runId, next_fire_at: next, at });
    return this.append(row.workflow, row.schedule_id, row.version, fired);
  }

  /** A lost race (another worker moved the schedule on) is no failure: the next round reads it afresh. */
  private async append(workflow: string, scheduleId: string, expectedVersion: number, event: ScheduleEvent): Promise<boolean> {
    try {
      await this.deps.store.append(
        { streamId: scheduleStream({ workflow, scheduleId }), expectedVersion, events: [event] },
        { metadata: causationMetadata(scheduleCausation(workflow, scheduleId)) },
      );
      return true;
    } catch (error) {
      if (error instanceof VersionConflictError) return true;
      throw error;
    }
  }
}

/** A schedule's ticks are its own doing: actor `schedule` named `<workflow>/<schedule id>` (ids are unique per workflow). */
export function scheduleCausation(workflow: string, scheduleId: string): Causation {
  return { actor: { type: 'schedule', id: `${workflow}/${scheduleId}` }, source: 'scheduler' };
}
