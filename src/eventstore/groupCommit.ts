// Group commit: writes that wait at the same moment share one commit; each still gets its own outcome.
import { isCommitOutcomeUnknown } from '../db/connectionLoss.js';

export interface GroupCommitLimits {
  /** Entries one commit takes at most. */
  maxBatch: number;
  /** Commits in flight at once (each on its own connection). */
  maxInFlight: number;
}

/**
 * Thrown by a batch's commit to roll it back when some entries must not commit (a run fenced out):
 * those get their errors, the others go first into the next commit.
 */
export class RefusedEntries extends Error {
  constructor(readonly refused: ReadonlyMap<number, Error>) {
    super(`${refused.size} entries refused: ${[...refused.values()].map((e) => e.message).join('; ')}`);
  }
}

interface Waiting<E, R> {
  entry: E;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * The first entry commits at once; entries that arrive while commits are in flight wait for the
 * next one, so under load a commit carries many. `commitBatch` answers, per entry, its result or
 * the error it gets while the others commit; if it throws, the batch is retried entry by entry,
 * so one entry's failure (a collision, a row the read model refuses) reaches that entry alone.
 */
export class GroupCommit<E, R> {
  private readonly queue: Waiting<E, R>[] = [];
  private inFlight = 0;

  constructor(
    private readonly commitBatch: (entries: E[]) => Promise<(R | Error)[]>,
    private readonly limits: GroupCommitLimits,
    /** Entries with the same key never share a commit (two appends to one stream). */
    private readonly keyOf: (entry: E) => string,
  ) {}

  submit(entry: E): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      this.startCommits();
    });
  }

  private startCommits(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.takeBatch();
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        this.startCommits();
      });
    }
  }

  /**
   * Up to maxBatch entries from the front, skipping (for the next commit) keys already taken. They
   * keep their arrival order, the order their events are delivered in: oldest first. (Sorted by
   * key, two commits naming the same streams would never deadlock; in arrival order they rarely
   * can, and PostgreSQL breaks it, after which each entry goes again alone.)
   */
  private takeBatch(): Waiting<E, R>[] {
    const keys = new Set<string>();
    const batch: Waiting<E, R>[] = [];
    for (let i = 0; i < this.queue.length && batch.length < this.limits.maxBatch;) {
      const key = this.keyOf(this.queue[i]!.entry);
      if (keys.has(key)) {
        i++;
        continue;
      }
      keys.add(key);
      batch.push(...this.queue.splice(i, 1));
    }
    return batch;
  }

  private async commit(batch: Waiting<E, R>[]): Promise<void> {
    try {
      const outcomes = await this.commitBatch(batch.map((w) => w.entry));
      batch.forEach((waiting, index) => {
        const outcome = outcomes[index]!;
        if (outcome instanceof Error) waiting.reject(outcome);
        else waiting.resolve(outcome);
      });
    } catch (error) {
      if (error instanceof RefusedEntries) {
        batch.forEach((waiting, index) => {
          const refusal = error.refused.get(index);
          if (refusal) waiting.reject(refusal);
        });
        this.queue.unshift(...batch.filter((_, index) => !error.refused.has(index)));
      } else if (batch.length === 1 || isCommitOutcomeUnknown(error)) {
        // A commit cut off in flight may have landed: going again entry by entry could answer a
        // conflict for what is in fact written. Each entry learns that its outcome is unknown.
        batch.forEach((waiting) => waiting.reject(error));
      } else {
        await Promise.all(batch.map((waiting) => this.commit([waiting])));
      }
    }
  }
}
