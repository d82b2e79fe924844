// Runs no process drives, picked up here: runs a database outage cut off here, then orphaned runs
// claimed by lease (their process died, or they were resumed elsewhere). And the heartbeat that
// keeps the leases of the runs this process drives.
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { Pool } from '../../db/pool.js';
import type { Logger } from '../../kernel/logger.js';
import { claimRuns, renewLeases } from './leases.js';

/** How long a backlog claim waits for more drives to end (see driveEnded). */
const BACKLOG_CLAIM_DELAY_MS = 20;

export interface ClaimsOptions {
  pool: Pool;
  /** This process, as run leases name it. */
  owner: string;
  leaseMs: number;
  claimIntervalMs: number;
  /** Runs one process drives at once; claims stop beyond it. */
  maxActiveRuns?: number | undefined;
  logger: Logger;
}

/** What claims need of the executor. */
export interface ClaimedRuns {
  activeRunIds(): string[];
  /** `leasedAt`: the run was just leased to this process (performance.now() before the claim). */
  resume(runId: string, leasedAt?: number): Promise<void>;
  /** Gives free concurrency slots to queued runs, at most `room`: answers the runs dequeued (nobody drives them yet). */
  admitQueued(room: number): Promise<string[]>;
}

export class RunClaims {
  /** Runs whose drive here ended when the database went away, to resume once it is back. */
  private readonly cutOff = new Set<string>();
  private heartbeat: NodeJS.Timeout | undefined;
  private claimTimer: NodeJS.Timeout | undefined;
  private claiming = false;
  /** A claim was asked for while one ran (a slot came free meanwhile): one more follows it. */
  private claimAgain = false;
  /** The last claim took all it had room for: more runs may be due (timers falling due together). */
  private backlog = false;
  private soon: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly options: ClaimsOptions,
    private readonly runs: ClaimedRuns,
  ) {}

  start(): void {
    const { pool, owner, leaseMs, claimIntervalMs, logger } = this.options;
    this.heartbeat = setInterval(
      () => {
        renewLeases(pool, this.runs.activeRunIds(), owner, leaseMs).catch((error: unknown) => logger.warn({ err: error }, 'renewing run leases failed'));
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    this.heartbeat.unref();
    this.claimTimer = setInterval(() => void this.claim(), claimIntervalMs);
    this.claimTimer.unref();
    void this.claim();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearInterval(this.claimTimer);
    clearTimeout(this.soon);
  }

  /**
   * A drive here ended: with a backlog, its room is claimed again now rather than at the next tick;
   * a run that held a concurrency slot hands it to the next queued run now, too.
   */
  driveEnded(freedSlot = false): void {
    if (!(this.backlog || freedSlot) || this.soon) return;
    // A moment's wait lets the drives ending together free their room for one claim, not one each.
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.claim();
    }, BACKLOG_CLAIM_DELAY_MS);
  }

  /** The run's drive here ended with the database away: it is resumed here first once it is back. */
  resumeWhenBack(runId: string): void {
    this.cutOff.add(runId);
  }

  private async claim(): Promise<void> {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    this.claimAgain = false;
    const { pool, owner, leaseMs, maxActiveRuns = 100, logger } = this.options;
    try {
      await this.resumeCutOff();
      await this.dequeue(maxActiveRuns - this.runs.activeRunIds().length);
      const room = maxActiveRuns - this.runs.activeRunIds().length;
      if (room <= 0) return;
      const claimedAt = performance.now();
      const claimed = await claimRuns(pool, owner, leaseMs, room);
      this.backlog = claimed.length === room;
      // Side by side: a thousand timers due at once should not wait on one another's journal read.
      const resumed = await Promise.allSettled(claimed.map((runId) => this.runs.resume(runId, claimedAt)));
      resumed.forEach((r, i) => r.status === 'rejected' && logger.warn({ err: r.reason, runId: claimed[i] }, 'resuming a claimed run failed'));
    } catch (error) {
      logger.warn({ err: error }, 'claiming runs failed');
    } finally {
      this.claiming = false;
      if (this.claimAgain) this.driveEnded(true);
    }
  }

  /** Queued runs whose slot came free are resumed here; another worker's claims pick up any this one cannot start. */
  private async dequeue(room: number): Promise<void> {
    const admitted = await this.runs.admitQueued(room);
    const resumed = await Promise.allSettled(admitted.map((runId) => this.runs.resume(runId)));
    resumed.forEach((r, i) => r.status === 'rejected' && this.options.logger.warn({ err: r.reason, runId: admitted[i] }, 'resuming a dequeued run failed'));
  }

  /**
   * Runs an outage cut off here go first: their lease may still be this process's own (its release
   * failed with the database away), which other claimers would wait out.
   */
  private async resumeCutOff(): Promise<void> {
    for (const runId of [...this.cutOff]) {
      try {
        await this.runs.resume(runId);
      } catch (error) {
        // Still away: this run and the others wait for the next tick. Any other failure is the
        // run's own; claims pick it up again once its lease has run out.
        if (isConnectionLoss(error)) throw error;
        this.options.logger.warn({ err: error, runId }, 'resuming a run cut off by the outage failed');
      }
      this.cutOff.delete(runId);
    }
  }
}
