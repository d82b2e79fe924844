// Appending (optimistic concurrency, inline projections, wake-ups after commit) and reading the log.
import { CommitOutcomeUnknown, isConnectionLoss } from '../db/connectionLoss.js';
import type { Pool, Queryable } from '../db/pool.js';
import { withCause } from '../kernel/causation.js';
import { VersionConflictError } from '../kernel/errors.js';
import { countAppended } from '../metrics/registry.js';
import { GroupCommit } from './groupCommit.js';
import { ChainHeads } from './chainHeads.js';
import { checkExpectedVersion, insertStreams, withCallMetadata } from './insert.js';
import { selectGlobalEvents, type LogFilter, selectStreamEvents, selectStreamsAfter, selectStreamVersion, selectTailPage } from './sql.js';
import { conflictWithActualVersion, EventTransaction, outcomesOf, type AppendOptions, type InlineProjector, type StreamOutcome } from './transaction.js';
import type { AppendResult, AppendToStream, EventMetadata, GlobalCursor, RecordedEvent } from './types.js';

export interface EventStoreOptions {
  pool: Pool;
  projector?: InlineProjector;
  /** Called once after every commit that appended events (batched NOTIFY, local wake-up). */
  onCommit?: (events: readonly RecordedEvent[]) => void;
}

/** Lost `any` races past this many back off a few jittered milliseconds so the writers spread out. */
const ANY_VERSION_EAGER_RETRIES = 3;

/** A single-stream append waiting for a group commit. */
interface SingleAppend {
  request: AppendToStream;
  metadata: EventMetadata;
}

/** Single-stream appends share commits: up to 100 per commit, three commits in flight. */
const SINGLE_APPEND_LIMITS = { maxBatch: 100, maxInFlight: 3 };

export class EventStore {
  readonly pool: Pool;
  private readonly projector: InlineProjector | undefined;
  private readonly onCommit: ((events: readonly RecordedEvent[]) => void) | undefined;

  private readonly singles: GroupCommit<SingleAppend, RecordedEvent[]>;
  /** Where this process's committed appends left each stream's hash chain. */
  private readonly heads = new ChainHeads();

  constructor(options: EventStoreOptions) {
    this.pool = options.pool;
    this.projector = options.projector;
    this.onCommit = options.onCommit;
    this.singles = new GroupCommit(
      (entries) => this.commitSingles(entries),
      SINGLE_APPEND_LIMITS,
      (entry) => entry.request.streamId,
    );
  }

  /**
   * Appends to one or several streams atomically. A stream not at its expected version fails the
   * whole call with VersionConflictError; `any` appends are retried until they land.
   */
  async append(streams: AppendToStream | readonly AppendToStream[], options: AppendOptions = {}): Promise<AppendResult> {
    const requests = Array.isArray(streams) ? streams : [streams as AppendToStream];
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.appendOnce(requests, options);
      } catch (error) {
        // An `any` append only loses to a writer that committed to the same stream, so every retry
        // follows progress: no bound is needed (a fixed one made busy streams refuse `any` appends).
        if (!(error instanceof VersionConflictError) || error.expectedVersion !== 'any') throw error;
        if (attempt >= ANY_VERSION_EAGER_RETRIES) await delay(Math.random() * Math.min(attempt, 20));
      }
    }
  }

  private async appendOnce(requests: readonly AppendToStream[], options: AppendOptions): Promise<AppendResult> {
    const single = requests.length === 1 ? requests[0]! : undefined;
    if (!single) return this.transact((tx) => tx.append(requests, options));
    // A bad request fails here, before it can share (and fail) a commit with others.
    checkExpectedVersion(single.expectedVersion);
    if (single.events.length === 0) return { versions: { [single.streamId]: await selectStreamVersion(this.pool, single.streamId) }, events: [] };
    // The cause is read here, in the caller's context: the commit may run in another caller's.
    const events = await this.singles.submit({ request: single, metadata: withCause(options.metadata) });
    return { versions: { [single.streamId]: events.at(-1)!.streamPosition }, events };
  }

  /**
   * Single-stream appends that waited together, each at its own expected version: one autocommit
   * statement when no read model handles their events (one INSERT is atomic), else one transaction.
   */
  private async commitSingles(entries: readonly SingleAppend[]): Promise<(RecordedEvent[] | Error)[]> {
    // Each call's metadata goes onto its own events, so one statement can carry several calls.
    const requests = entries.map(({ request, metadata }) => withCallMetadata(request, metadata, (own) => ({ ...metadata, ...own })));
    let outcomes: StreamOutcome[];
    if (this.projector?.handlesAny(requests.flatMap((r) => r.events.map((e) => e.type)))) {
      outcomes = await this.transact((tx) => tx.appendEach(requests));
    } else {
      const recorded = await insertStreams(this.pool, requests, this.heads);
      if (recorded.length > 0) this.committed(recorded);
      outcomes = outcomesOf(requests, recorded);
    }
    return Promise.all(
      outcomes.map(async (outcome, index) => {
        if (!('conflict' in outcome)) return outcome.events;
        return conflictWithActualVersion(this.pool, requests[index]!);
      }),
    );
  }

  /** After every commit of this process: the chain heads, the appended-events counter, then the wake-ups. */
  private committed(events: readonly RecordedEvent[]): void {
    this.heads.remember(events);
    countAppended(events);
    this.onCommit?.(events);
  }

  /**
   * Runs `work` in one transaction; wake-ups go out after the commit, never inside it. BEGIN travels
   * with the work's first statements, COMMIT with the read-model writes its appends sent last (the
   * pooled client pipelines): a write that fails aborts the transaction, and PostgreSQL answers that
   * COMMIT by rolling back, so the write's error is the outcome.
   */
  async transact<T>(work: (tx: EventTransaction) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const tx = new EventTransaction(client, this.projector, this.heads);
    let broken: Error | undefined;
    let committing: Promise<{ command: string }> | undefined;
    try {
      const begun = client.query('BEGIN');
      begun.catch(() => undefined);
      const result = await work(tx);
      await begun;
      committing = client.query('COMMIT');
      committing.catch(() => undefined);
      await tx.settled();
      // PostgreSQL answers the COMMIT of a transaction a failed statement aborted with a rollback.
      if ((await committing).command !== 'COMMIT') throw new Error('the transaction was rolled back: one of its statements failed');
      if (tx.appended.length > 0) this.committed(tx.appended);
      return result;
    } catch (error) {
      // A failed statement sent ahead (a read-model write) aborts the transaction: what failed after it only says so.
      const cause = (await tx.firstFailure()) ?? error;
      // Lost in flight, the COMMIT may have happened or not: callers must not take it for a rollback.
      if (committing && isConnectionLoss(cause)) {
        broken = cause as Error;
        throw new CommitOutcomeUnknown(cause);
      }
      await client.query('ROLLBACK').catch((rollbackError: Error) => {
        broken = rollbackError;
      });
      throw cause;
    } finally {
      client.release(broken);
    }
  }

  async streamVersion(streamId: string): Promise<number> {
    return selectStreamVersion(this.pool, streamId);
  }

  /** Events of one stream after `after` (a stream position), at most `limit`; `db`: a read replica's pool. */
  async readStream(streamId: string, after = 0, limit = 1000, db: Queryable = this.pool): Promise<RecordedEvent[]> {
    return selectStreamEvents(db, streamId, after, limit);
  }

  /** Events of several streams, each after its own position, in one query (no gate: see selectStreamsAfter). */
  async readStreamsAfter(streams: readonly { streamId: string; after: number }[], limitPerStream: number): Promise<RecordedEvent[]> {
    return selectStreamsAfter(this.pool, streams, limitPerStream);
  }

  /** Every event of one stream, in order. */
  async readWholeStream(streamId: string, client: Queryable = this.pool): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    for (;;) {
      const page = await selectStreamEvents(client, streamId, events.at(-1)?.streamPosition ?? 0, 1000);
      events.push(...page);
      if (page.length < 1000) return events;
    }
  }

  /**
   * One page of the global log after `cursor`, behind the snapshot gate. `db` may be a streaming
   * replica: its snapshots' xmin is the oldest transaction it knows to be running on the primary,
   * so what it shows of the gated order is a prefix of what the primary will show.
   */
  async readGlobal(cursor: GlobalCursor, limit = 1000, filter: LogFilter = {}, db: Queryable = this.pool): Promise<RecordedEvent[]> {
    return selectGlobalEvents(db, cursor, limit, filter);
  }

  /** A page as readGlobal reads it, less the events of `skipped` transactions, with the gate it read behind. */
  async readTail(cursor: GlobalCursor, limit: number, skipped: readonly string[]): Promise<{ events: RecordedEvent[]; gate: string }> {
    return selectTailPage(this.pool, cursor, limit, skipped);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
