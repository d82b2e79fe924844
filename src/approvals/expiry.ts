// Expiring undecided approvals: every worker sweeps, so an expiry lands even if no process ran at its moment.
import type { Pool } from '../db/pool.js';
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { RunExecutor } from '../runs/engine/executor.js';
import { foldRun } from '../runs/state.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import { asRunEvent, runStream } from '../runs/events.js';
import { decideApproval, EXPIRED } from './decide.js';
import { expiredApprovals } from './queries.js';

export const EXPIRY_DECIDER = 'system:expiry';

export class ApprovalExpiry {
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;

  constructor(private readonly deps: { pool: Pool; store: EventStore; executor: RunExecutor; logger: Logger; clock: Clock; intervalMs: number }) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.deps.intervalMs);
    this.timer.unref();
    void this.sweep();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<number> {
    if (this.sweeping) return 0;
    this.sweeping = true;
    let expired = 0;
    try {
      // The clock that set expires_at decides when it has passed (not the database's).
      const now = this.deps.clock.now();
      for (const approval of await expiredApprovals(this.deps.pool, now, 50)) {
        const stream = runStream(approval.run_id);
        try {
          await runCommand(this.deps.store, {
            streams: [stream],
            decide: (read) => ({
              events: {
                [stream]: decideApproval(
                  foldRun(read.get(stream)!.map((e) => asRunEvent(e))),
                  approval.approval_id,
                  { decision: EXPIRED },
                  EXPIRY_DECIDER,
                  now,
                ),
              },
              result: undefined,
            }),
            retries: 1,
            metadata: { actor: { type: 'system', id: EXPIRY_DECIDER } },
          });
          expired++;
          await this.deps.executor.resume(approval.run_id);
        } catch (error) {
          // Decided or expired by someone else meanwhile: nothing to do.
          if ((error as { code?: string }).code !== 'CONFLICT')
            this.deps.logger.warn({ err: error, approval: approval.approval_id }, 'expiring an approval failed');
        }
      }
    } catch (error) {
      // A timer calls this with nobody to hand a rejection to (it would end the process): the
      // database is likely away, and the next tick looks again.
      this.deps.logger.warn({ err: error }, 'sweeping expired approvals failed; trying again at the next tick');
    } finally {
      this.sweeping = false;
    }
    return expired;
  }
}
