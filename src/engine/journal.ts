// Group commit of run journals: the flushes of many runs share one transaction, each run's lease
// checked inside it. A run still waits for its own entry to commit before its next step starts.
import type { EventStore, EventTransaction } from '../eventstore/store.js';
import type { NewEvent, RecordedEvent } from '../eventstore/types.js';
import { VersionConflictError } from '../kernel/errors.js';
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

export interface JournalOptions {
  /** Entries one commit takes at most. */
  maxBatch: number;
  /** Commits in flight at once (each on its own connection). */
  maxInFlight: number;
}

interface Waiting {
  entry: JournalEntry;
  resolve: (events: RecordedEvent[]) => void;
  reject: (error: unknown) => void;
}

/** Thrown inside a batch's transaction to roll it back when some of its runs were fenced out. */
class FencedRuns extends Error {
  constructor(readonly runIds: ReadonlySet<string>) {
    super(`leases held elsewhere: ${[...runIds].join(', ')}`);
  }
}

/**
 * Entries that arrive while commits are in flight wait for the next one, so under load a commit
 * carries many runs' steps: one transaction, one events INSERT, one read-model write, one lease
 * statement and one NOTIFY for all of them. Alone, an entry commits at once.
 */
export class RunJournal {
  private readonly queue: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly store: EventStore,
    private readonly owner: string,
    private readonly leaseMs: number,
    private readonly options: JournalOptions,
  ) {}

  /** Commits the entry (with others); rejects with VersionConflictError or LeaseLost for it alone. */
  write(entry: JournalEntry): Promise<RecordedEvent[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      this.startCommits();
    });
  }

  /**
   * Commits one entry in a transaction of its own, whose `work` runs first and adds events (a
   * ModelOp's record write commits with its journal entry or not at all).
   */
  writeWith(entryOf: (produced: NewEvent[]) => JournalEntry, work: (tx: EventTransaction) => Promise<NewEvent[]>): Promise<RecordedEvent[]> {
    return this.store
      .transact(async (tx) => {
        const [events] = await this.journalIn(tx, [entryOf(await work(tx))]);
        return events as RecordedEvent[];
      })
      .catch((error: unknown) => {
        throw error instanceof FencedRuns ? new LeaseLost(error.message) : error;
      });
  }

  private startCommits(): void {
    while (this.inFlight < this.options.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        this.startCommits();
      });
    }
  }

  private async commit(batch: Waiting[]): Promise<void> {
    try {
      const outcomes = await this.store.transact((tx) => this.journalIn(tx, batch.map((w) => w.entry), batch.length > 1));
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index]!;
        if (outcome instanceof VersionConflictError) waiting.reject(outcome);
        else waiting.resolve(outcome);
      });
    } catch (error) {
      if (error instanceof FencedRuns) {
        for (const waiting of batch.filter((w) => error.runIds.has(w.entry.runId))) waiting.reject(new LeaseLost(`run ${waiting.entry.runId}: lease held elsewhere`));
        // The others did nothing wrong: they go first into the next commit.
        this.queue.unshift(...batch.filter((w) => !error.runIds.has(w.entry.runId)));
      } else if (batch.length === 1) {
        batch[0]!.reject(error);
      } else {
        // One entry's failure (a concurrent writer on its stream, say) rolled everyone back: each
        // goes again alone, so the error reaches its own entry and only it.
        await Promise.all(batch.map((waiting) => this.commit([waiting])));
      }
    }
  }

  /**
   * Appends the entries inside `tx` and settles their leases. Alone, an entry's conflict throws;
   * in a batch it is that entry's outcome while the others commit. A fenced run rolls back all.
   */
  private async journalIn(tx: EventTransaction, entries: readonly JournalEntry[], conflictsAreOutcomes = false): Promise<(RecordedEvent[] | VersionConflictError)[]> {
    const outcomes = await tx.appendEach(entries.map((e) => ({ streamId: e.stream, expectedVersion: e.expectedVersion, events: e.events })));
    const results = outcomes.map((outcome) => ('conflict' in outcome ? outcome.conflict : outcome.events));
    const conflict = results.find((r) => r instanceof VersionConflictError);
    if (conflict && !conflictsAreOutcomes) throw conflict;
    // Checked in every commit, not only the first: a lease lost during a stall fences this writer.
    // After the append, which locks the runs' svc_runs rows: claims lock those before leases (no deadlock).
    const written = entries.filter((_, index) => !(results[index] instanceof VersionConflictError) && (results[index] as RecordedEvent[]).length > 0);
    if (written.length > 0) {
      const fenced = await settleLeases(tx.client, written.map((e) => ({ runId: e.runId, release: e.releasesLease })), this.owner, this.leaseMs);
      if (fenced.size > 0) throw new FencedRuns(fenced);
    }
    return results;
  }
}
