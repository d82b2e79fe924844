// A transaction of appends: optimistic concurrency per stream, read models applied inside it.
import type { PoolClient, Queryable } from '../db/pool.js';
import { withCause } from '../kernel/causation.js';
import { VersionConflictError } from '../kernel/errors.js';
import type { ChainHeads } from './chainHeads.js';
import { insertStreams, withCallMetadata, type CalledAppend } from './insert.js';
import { selectStreamVersion } from './sql.js';
import { streamTypeOf, type AppendResult, type AppendToStream, type EventMetadata, type RecordedEvent } from './types.js';

/** Applies read models inside the append transaction (implemented by projections/). */
export interface InlineProjector {
  handlesAny(types: readonly string[]): boolean;
  /** Starts a pass over events about to be inserted in `client`'s transaction (it may send reads now). */
  begin(client: Queryable, upcoming: readonly RecordedEvent[]): ProjectorPass;
}

export interface ProjectorPass {
  /** Folds the inserted events and sends the read-model writes; `written` settles when they are done. */
  apply(inserted: readonly RecordedEvent[]): Promise<{ written: Promise<void> }>;
}

export interface AppendOptions {
  /** Stored with every event of the call (actor, tenant, request id, causation). */
  metadata?: EventMetadata;
}

/** What one stream got from `appendEach`: its events, or the conflict that left it out. */
export type StreamOutcome = { events: RecordedEvent[] } | { conflict: VersionConflictError };

/** A transaction that may append to several streams; it commits or rolls back as a whole. */
export class EventTransaction {
  readonly appended: RecordedEvent[] = [];
  /** Statements sent and not yet awaited (the read-model writes, a caller's checks): awaited before COMMIT. */
  private readonly pending: Promise<unknown>[] = [];

  constructor(
    readonly client: PoolClient,
    private readonly projector: InlineProjector | undefined,
    private readonly heads?: ChainHeads,
  ) {}

  /** Appends to every stream or, when one is not at its expected version, throws for it. */
  async append(streams: AppendToStream | readonly AppendToStream[], options: AppendOptions = {}): Promise<AppendResult> {
    const requests = Array.isArray(streams) ? streams : [streams as AppendToStream];
    const outcomes = await this.appendEach(requests, options);
    const result: AppendResult = { versions: {}, events: [] };
    for (const [index, request] of requests.entries()) {
      const outcome = outcomes[index]!;
      if ('conflict' in outcome) {
        throw await conflictWithActualVersion(this.client, request);
      }
      result.events.push(...outcome.events);
      result.versions[request.streamId] = outcome.events.at(-1)?.streamPosition ?? (await selectStreamVersion(this.client, request.streamId));
    }
    return result;
  }

  /**
   * Appends to each stream on its own terms in one statement: a stream not at its expected version
   * is left out (its outcome says so) and the others still go in. The caller decides whether that
   * fails the transaction. A concurrent writer of a stream's positions throws VersionConflictError.
   */
  async appendEach(requests: readonly AppendToStream[], options: AppendOptions = {}): Promise<StreamOutcome[]> {
    const complete = requests.map((request) => withCauses(request, options.metadata));
    // Sent at once, in this order, on the pipelined client: the INSERT, then the read models' row reads.
    const inserting = insertStreams(this.client, complete, this.heads);
    const pass = this.projector?.begin(this.client, upcoming(complete));
    const recorded = await inserting;
    if (pass && recorded.length > 0) this.beforeCommit((await pass.apply(recorded)).written);
    this.appended.push(...recorded);
    return outcomesOf(requests, recorded);
  }

  /**
   * A statement sent and not waited for, whose failure must fail the transaction: the transaction
   * awaits it (and its COMMIT rolls back when it failed, as after any failed statement).
   */
  beforeCommit(statement: Promise<unknown>): void {
    statement.catch(() => undefined);
    this.pending.push(statement);
  }

  /**
   * Waits for the statements sent and not awaited (later statements of the transaction did not wait
   * for them: the connection runs them in order, so those statements see them).
   */
  async settled(): Promise<void> {
    const failure = await this.firstFailure();
    if (failure !== undefined) throw failure;
  }

  /** The first of the statements not awaited that failed, if any: those after it failed only because it did. */
  async firstFailure(): Promise<unknown> {
    for (const outcome of await Promise.allSettled(this.pending.splice(0))) if (outcome.status === 'rejected') return outcome.reason as unknown;
    return undefined;
  }
}

/** The events as they will be recorded, less what the database decides: for reading their read models' rows ahead. */
function upcoming(requests: readonly CalledAppend[]): RecordedEvent[] {
  return requests.flatMap((request) =>
    request.events.map((event) => ({
      globalPosition: 0,
      streamId: request.streamId,
      streamType: request.streamType ?? streamTypeOf(request.streamId),
      streamPosition: 0,
      type: event.type,
      data: event.data,
      metadata: event.metadata ?? request.metadata,
      transactionId: '',
      recordedAt: '',
      hash: null,
    })),
  );
}

/** The request with the call's metadata completed by its cause (an event's own: the call's, then its own, then the cause). */
function withCauses(request: AppendToStream, metadata: EventMetadata | undefined): CalledAppend {
  return withCallMetadata(request, withCause(metadata), (own) => withCause({ ...metadata, ...own }));
}

/** Each request's events among those inserted; a request with events and none inserted was not at its version. */
export function outcomesOf(requests: readonly AppendToStream[], recorded: readonly RecordedEvent[]): StreamOutcome[] {
  const byStream = new Map<string, RecordedEvent[]>();
  for (const event of recorded) {
    const events = byStream.get(event.streamId);
    if (events) events.push(event);
    else byStream.set(event.streamId, [event]);
  }
  return requests.map((request) => {
    if (request.events.length === 0) return { events: [] };
    const events = byStream.get(request.streamId);
    return events ? { events } : { conflict: new VersionConflictError(request.streamId, request.expectedVersion, null) };
  });
}

export /** The conflict of a request that was not at its expected version, saying where the stream is. */
async function conflictWithActualVersion(client: Queryable, { streamId, expectedVersion }: AppendToStream): Promise<VersionConflictError> {
  return new VersionConflictError(streamId, expectedVersion, await selectStreamVersion(client, streamId).catch(() => null));
}
