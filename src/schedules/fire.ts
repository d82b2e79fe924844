// Firing one tick: claim its row (the run id is fixed there), start the run under that id, mark it started.
import type { Pool } from '../db/pool.js';
import type { Clock } from '../kernel/clock.js';
import { VersionConflictError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { RunStarter } from '../runs/trigger/startRun.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import type { ScheduleDefinition } from '../workflows/schedules.js';
import type { ScheduleKey } from './events.js';
import { claimTick, findTick, markTickStarted } from './queries.js';

export interface FireDeps {
  pool: Pool;
  starter: RunStarter;
  clock: Clock;
  /** Identifies this process in tick leases. */
  owner: string;
  /** How long a claimed tick stays this worker's before another may start its run. */
  leaseMs: number;
}

export interface DeclaredHere {
  workflow: WorkflowDefinition;
  schedule: ScheduleDefinition;
}

/** The schedule as this worker's serving version of the workflow declares it (at `schemaVersion`, if given). */
export function declaredSchedule(workflows: WorkflowRegistry, name: string, scheduleId: string, schemaVersion?: string): DeclaredHere | undefined {
  const workflow = workflows.active(name);
  if (!workflow || (schemaVersion !== undefined && workflow.version !== schemaVersion)) return undefined;
  const schedule = workflow.trigger.schedules.find((s) => s.id === scheduleId);
  return schedule ? { workflow, schedule } : undefined;
}

/** `fired`: this call started the run; `started`: it ran before (the event saying so may be missing); `held`: another worker is at it. */
export type FireOutcome = { kind: 'fired' | 'started'; runId: string } | { kind: 'held' };

export class TickFirer {
  constructor(private readonly deps: FireDeps) {}

  async fire(key: ScheduleKey, workflow: WorkflowDefinition, schedule: ScheduleDefinition, scheduledAt: Date): Promise<FireOutcome> {
    const { pool, clock, owner, leaseMs } = this.deps;
    const runId = await claimTick(pool, { key, scheduledAt, runId: newId(), owner, now: clock.now(), leaseMs });
    if (runId === undefined) {
      const tick = await findTick(pool, key, scheduledAt);
      return tick?.started_at ? { kind: 'started', runId: tick.run_id } : { kind: 'held' };
    }
    await this.start(workflow, schedule, runId, scheduledAt);
    await markTickStarted(pool, key, scheduledAt, clock.now());
    return { kind: 'fired', runId };
  }

  /** Starting a run id twice is impossible: run_started opens its stream at version 0, once. */
  private async start(workflow: WorkflowDefinition, schedule: ScheduleDefinition, runId: string, scheduledAt: Date): Promise<void> {
    const trigger = { type: 'schedule' as const, schedule_id: schedule.id, scheduled_at: scheduledAt.toISOString() };
    try {
      await this.deps.starter.startScheduled({ workflow, input: schedule.input, runId, schedule: trigger }, false);
    } catch (error) {
      // Started before, by a worker that died before it marked the tick.
      if (!(error instanceof VersionConflictError)) throw error;
    }
  }
}
