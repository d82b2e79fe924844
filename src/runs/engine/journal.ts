// Group commit of run journals: the flushes of many runs share one transaction, each run's lease
// checked inside it. A run still waits for its own entry to commit before its next step starts.
import { GroupCommit, RefusedEntries, type GroupCommitLimits } from '../../eventstore/groupCommit.js';
import type { EventStore, EventTransaction } from '../../eventstore/store.js';
import type { NewEvent, RecordedEvent } from '../../eventstore/types.js';
import { settleLeases } from './leases.js';

/** The run's lease is held by another process: this one must stop driving it. */
export class LeaseLost extends Error {}

export interface JournalEntry {
  runId: string;
  stream: string;
  /** The run's journaled version; a concurrent append to the stream makes the entry a conflict. */
  expectedVersion: number;
  events: NewEvent[];
  /** The run ends with these events: its lease is given up in the same commit. */
  releasesLease: boolean;
}

/**
 * Entries that arrive while commits are in flight wait for the next one, so under load a commit
 * carries many runs' steps: one transaction, one events INSERT, one read-model write, one lease
 * statement and one NOTIFY for all of them. Alone, an entry commits at once.
 */
export class RunJournal {
  private readonly group: GroupCommit<JournalEntry, RecordedEvent[]>;

  constructor(
    private readonly store: EventStore,
    private readonly owner: string,
    private readonly leaseMs: number,
    limits: GroupCommitLimits,
  ) {
    this.group = new GroupCommit((entries) => this.store.transact((tx) => this.journalIn(tx, entries)), limits, (entry) => entry.stream);
  }

  /** Commits the entry (with others); rejects with VersionConflictError or LeaseLost for it alone. */
  write(entry: JournalEntry): Promise<RecordedEvent[]> {
    return this.group.submit(entry);
  }

  /**
   * Commits one entry in a transaction of its own, whose `work` runs first and adds events (a
   * ModelOp's record write commits with its journal entry or not at all).
   */
  writeWith(entryOf: (produced: NewEvent[]) => JournalEntry, work: (tx: EventTransaction) => Promise<NewEvent[]>): Promise<RecordedEvent[]> {
    return this.store
      .transact(async (tx) => {
        const [outcome] = await this.journalIn(tx, [entryOf(await work(tx))]);
        // Alone, a conflict must roll the record write back too.
        if (outcome instanceof Error) throw outcome;
        return outcome!;
      })
      .catch((error: unknown) => {
        throw error instanceof RefusedEntries ? error.refused.get(0)! : error;
      });
  }

  /**
   * Appends the entries inside `tx` and settles their leases. A conflict is its entry's outcome
   * while the others commit; a fenced run refuses the whole commit (it is redone without it).
   */
  private async journalIn(tx: EventTransaction, entries: readonly JournalEntry[]): Promise<(RecordedEvent[] | Error)[]> {
    const outcomes = await tx.appendEach(entries.map((e) => ({ streamId: e.stream, expectedVersion: e.expectedVersion, events: e.events })));
    const results = outcomes.map((outcome) => ('conflict' in outcome ? outcome.conflict : outcome.events));
    // Checked in every commit, not only the first: a lease lost during a stall fences this writer.
    // After the append, which locks the runs' svc_runs rows: claims lock those before leases (no deadlock).
    const written = entries.filter((_, index) => {
      const result = results[index]!;
      return !(result instanceof Error) && result.length > 0;
    });
    if (written.length > 0) {
      const fenced = await settleLeases(tx.client, written.map((e) => ({ runId: e.runId, release: e.releasesLease })), this.owner, this.leaseMs);
      const refused = new Map<number, Error>();
      entries.forEach((entry, index) => {
        if (fenced.has(entry.runId)) refused.set(index, new LeaseLost(`run ${entry.runId}: lease held elsewhere`));
      });
      if (refused.size > 0) throw new RefusedEntries(refused);
    }
    return results;
  }
}
