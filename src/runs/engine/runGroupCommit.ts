// Group commit of run appends: the flushes of many runs share one transaction, each run's lease
// checked inside it. A run still waits for its own append to commit before its next step starts.
import { GroupCommit, RefusedEntries, type GroupCommitLimits } from '../../eventstore/groupCommit.js';
import type { EventStore } from '../../eventstore/store.js';
import type { EventTransaction } from '../../eventstore/transaction.js';
import type { NewEvent, RecordedEvent } from '../../eventstore/types.js';
import { insertNewKeys, type NewKey } from '../../privacy/keyStore.js';
import { FencedRuns, settleLeases } from './leases.js';

/** The run's lease is held by another process: this one must stop driving it. */
export class LeaseLost extends Error {}

/** One run's events to append to its journal, at its journaled version. */
export interface RunAppend {
  runId: string;
  stream: string;
  /** The run's journaled version; a concurrent append to the stream makes the append a conflict. */
  expectedVersion: number;
  events: NewEvent[];
  /** The run ends with these events: its lease is given up in the same commit. */
  releasesLease: boolean;
  /** The run's data key (spec.personal_data), stored in the commit of the events first sealed with it. */
  newKey?: NewKey | undefined;
}

/**
 * Appends that arrive while commits are in flight wait for the next one, so under load a commit
 * carries many runs' steps: one transaction, one events INSERT, one read-model write, one lease
 * statement and one NOTIFY for all of them. Alone, an append commits at once.
 */
export class RunGroupCommit {
  private readonly group: GroupCommit<RunAppend, RecordedEvent[]>;

  constructor(
    private readonly store: EventStore,
    private readonly owner: string,
    private readonly leaseMs: number,
    limits: GroupCommitLimits,
  ) {
    this.group = new GroupCommit(
      (appends) => this.store.transact((tx) => this.appendIn(tx, appends)),
      limits,
      (append) => append.stream,
    );
  }

  /** Commits the append (with others); rejects with VersionConflictError or LeaseLost for it alone. */
  commit(append: RunAppend): Promise<RecordedEvent[]> {
    return this.group.submit(append);
  }

  /**
   * Commits one append in a transaction of its own, whose `work` runs first and adds events (a
   * ModelOp's record write commits with the step's events or not at all).
   */
  commitWith<E extends NewEvent>(appendOf: (produced: E[]) => RunAppend, work: (tx: EventTransaction) => Promise<E[]>): Promise<RecordedEvent[]> {
    return this.store
      .transact(async (tx) => {
        const [outcome] = await this.appendIn(tx, [appendOf(await work(tx))]);
        // Alone, a conflict must roll the record write back too.
        if (outcome instanceof Error) throw outcome;
        return outcome!;
      })
      .catch((error: unknown) => {
        throw error instanceof RefusedEntries ? error.refused.get(0)! : error;
      });
  }

  /**
   * Appends inside `tx` and settles the runs' leases. A conflict is its append's outcome while the
   * others commit; a fenced run refuses the whole commit (it is redone without it). The leases
   * statement is not waited for here: the transaction's COMMIT travels with it, and rolls back when
   * it fails (the transaction then fails with RefusedEntries).
   */
  private async appendIn(tx: EventTransaction, appends: readonly RunAppend[]): Promise<(RecordedEvent[] | Error)[]> {
    const outcomes = await tx.appendEach(appends.map((a) => ({ streamId: a.stream, expectedVersion: a.expectedVersion, events: a.events })));
    const results = outcomes.map((outcome) => ('conflict' in outcome ? outcome.conflict : outcome.events));
    // Checked in every commit, not only the first: a lease lost during a stall fences this writer.
    // After the append, which locks the runs' svc_runs rows: claims lock those before leases (no deadlock).
    const written = appends.filter((_, index) => {
      const result = results[index]!;
      return !(result instanceof Error) && result.length > 0;
    });
    const newKeys = written.flatMap((a) => (a.newKey ? [a.newKey] : []));
    if (newKeys.length > 0) tx.beforeCommit(insertNewKeys(tx.client, newKeys));
    if (written.length > 0) {
      const settled = settleLeases(
        tx.client,
        written.map((a) => ({ runId: a.runId, release: a.releasesLease })),
        this.owner,
        this.leaseMs,
      ).catch((error: unknown) => {
        if (!(error instanceof FencedRuns)) throw error;
        const refused = new Map<number, Error>();
        appends.forEach((append, index) => {
          if (error.runIds.has(append.runId)) refused.set(index, new LeaseLost(`run ${append.runId}: lease held elsewhere`));
        });
        throw new RefusedEntries(refused);
      });
      tx.beforeCommit(settled);
    }
    return results;
  }
}
