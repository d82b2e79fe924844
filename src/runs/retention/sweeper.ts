// The retention sweeper: every worker expires ended runs past their workflow's retention, in bounded batches.
import { isoFromPgTimestamptz, type Pool } from '../../db/pool.js';
import { runCommand } from '../../eventstore/command.js';
import type { EventStore } from '../../eventstore/store.js';
import type { Clock } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/logger.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { expireRun, foldRetention, retentionStream } from './decide.js';
import { expiryCandidates } from './queries.js';
import type { DataKeys } from '../../privacy/dataKeys.js';

export const RETENTION_ACTOR = 'system:retention';
const BATCH = 100;

export interface RetentionSweeperDeps {
  pool: Pool;
  store: EventStore;
  workflows: WorkflowRegistry;
  clock: Clock;
  logger: Logger;
  /** SVC_RUN_RETENTION: where a workflow sets no spec.retention.runs (null: kept forever). */
  defaultRetentionMs: number | null;
  /** Destroys an expired run's data key (its spec.personal_data); absent: nothing is sealed per run. */
  dataKeys?: DataKeys;
}

/**
 * Each pass takes, per workflow with a retention, one batch of its ended runs from an index range
 * (oldest end first) and appends `run_expired` to each run's retention stream at the version it read:
 * of two workers sweeping at once, one appends and the other finds the run expired (each run once).
 * The runs projection then drops the run's row; its journal stays, hash chains intact.
 */
export class RetentionSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(private readonly deps: RetentionSweeperDeps) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sweep().catch((error: unknown) => this.deps.logger.warn({ err: error }, 'retention sweep failed')), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One pass: answers how many runs this worker expired. */
  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    try {
      let expired = 0;
      for (const [workflow, retentionMs] of this.policies()) expired += await this.sweepWorkflow(workflow, retentionMs);
      return expired;
    } finally {
      this.sweeping = false;
    }
  }

  /** The retention of each workflow: its active (else newest) version's spec.retention.runs, else the default. */
  policies(): [string, number][] {
    const { workflows, defaultRetentionMs } = this.deps;
    return workflows.names().flatMap((name): [string, number][] => {
      const definition = workflows.active(name) ?? workflows.versions(name).at(-1);
      const retention = definition?.runRetentionMs ?? defaultRetentionMs;
      return retention === null ? [] : [[name, retention]];
    });
  }

  private async sweepWorkflow(workflow: string, retentionMs: number): Promise<number> {
    const now = this.deps.clock.now();
    const batch = await expiryCandidates(this.deps.pool, workflow, new Date(now.getTime() - retentionMs), BATCH);
    let expired = 0;
    const shreds = this.deps.dataKeys !== undefined && this.deps.workflows.versions(workflow).some((v) => (v.personalData ?? []).length > 0);
    for (const run of batch) {
      const stream = retentionStream(run.id);
      const { appended } = await runCommand(this.deps.store, {
        streams: [stream],
        decide: (read) => ({
          events: {
            [stream]: expireRun(
              foldRetention(read.get(stream)!),
              { runId: run.id, workflow, endedAt: isoFromPgTimestamptz(run.ended_at), retentionMs },
              now.toISOString(),
            ),
          },
          result: undefined,
        }),
        metadata: { actor: { type: 'system', id: RETENTION_ACTOR }, source: 'executor' },
      });
      if (appended.events.length > 0) expired++;
      // After the expiry is journaled (a hold that won the race keeps the key): the run's sealed values are shredded.
      if (shreds) await this.deps.dataKeys!.eraseByItem('run', run.id);
    }
    return expired;
  }
}
