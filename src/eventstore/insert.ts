// Inserting the events of several streams in one statement, each event linked into its stream's
// hash chain: here when this process knows every stream's head, else by the database.
import type { DatabaseError } from 'pg';
import type { Queryable } from '../db/pool.js';
import { VersionConflictError } from '../kernel/errors.js';
import { jcs } from '../kernel/jcs.js';
import { asJsonb } from '../kernel/jsonbShape.js';
import { canonicalParts, canonicalTime, chainHash } from './canonical.js';
import type { ChainHeads } from './chainHeads.js';
import { CHAIN_IN_DATABASE_SQL, CHAIN_IN_DATABASE_STATEMENT, CHAINED_HERE_SQL, CHAINED_HERE_STATEMENT } from './insertStatements.js';
import { streamTypeOf, type AppendToStream, type EventMetadata, type NewEvent, type RecordedEvent } from './types.js';

/** One stream's share of an insert: its events go at the end of the stream, if it is at `expectedVersion`. */
export interface StreamInsert {
  streamId: string;
  streamType: string;
  /** null: wherever the stream's end is. */
  expectedVersion: number | null;
  /** The call's metadata, which every event without metadata of its own carries (canonicalised once). */
  metadata: EventMetadata;
  /** An event's own metadata is complete (the call's merged in: see withCallMetadata). */
  events: readonly NewEvent[];
}

/** A stream's append with the metadata of its call. */
export interface CalledAppend extends AppendToStream {
  metadata: EventMetadata;
}

/**
 * The request beside the call's metadata. Only events with metadata of their own are copied, that
 * metadata merged by `merge`: the others stay as the caller made them (no copy per event).
 */
export function withCallMetadata(request: AppendToStream, metadata: EventMetadata, merge: (own: EventMetadata) => EventMetadata): CalledAppend {
  const hasOwn = request.events.some((e) => e.metadata);
  const events = hasOwn ? request.events.map((e) => (e.metadata ? { ...e, metadata: merge(e.metadata) } : e)) : request.events;
  return { ...request, metadata, events };
}

/** What the database decides for each inserted event; the rest the caller sent. */
interface InsertedRow {
  global_position: number;
  stream_id: string;
  stream_position: number;
  transaction_id: string;
  recorded_at: string;
  hash: string | null;
}

/**
 * Inserts the events of several streams in a single statement (one round trip however many
 * streams). Each stream with an expected version gets its events only if it is exactly there; the
 * others still get theirs. A concurrent writer of the same positions fails the statement on the
 * unique key. Answers the inserted events in global order.
 *
 * When `heads` knows where every stream's chain stands, the events are hashed here and stamped
 * with this process's clock; otherwise the database links them and stamps its own time. Either way
 * the statement answers only what the database decides: data and metadata come from the request in
 * jsonb's shape, as a read of the table gives them, without sending the documents back.
 */
export async function insertEvents(client: Queryable, inserts: readonly StreamInsert[], heads?: ChainHeads): Promise<RecordedEvent[]> {
  const previous = heads ? inserts.map((insert) => heads.previousHash(insert.streamId, insert.expectedVersion)) : [];
  const chainHere = heads !== undefined && previous.every((hash) => hash !== undefined) && inserts.every((i) => i.events.every((e) => !e.recordedAt));
  const statement = chainHere
    ? { name: CHAINED_HERE_STATEMENT, text: CHAINED_HERE_SQL, values: [chainedHerePayload(inserts, previous as string[])] }
    : { name: CHAIN_IN_DATABASE_STATEMENT, text: CHAIN_IN_DATABASE_SQL, values: [chainInDatabasePayload(inserts)] };
  const { rows } = await client.query<InsertedRow>(statement);
  if (chainHere) forgetLeftOut(heads, inserts, rows);
  return recordedFromInsert(inserts, rows);
}

function metadataOf(event: NewEvent, insert: StreamInsert): EventMetadata {
  return event.metadata ?? insert.metadata;
}

/** `derive` of metadata, computed again only when the object changes: a call's events mostly share one. */
function repeated<T>(derive: (metadata: EventMetadata) => T): (metadata: EventMetadata) => T {
  let last: { metadata: EventMetadata; derived: T } | undefined;
  return (metadata) => {
    if (last?.metadata !== metadata) last = { metadata, derived: derive(metadata) };
    return last.derived;
  };
}

/** Each event's canonical text without the time and position, which the statement splices in. */
function chainInDatabasePayload(inserts: readonly StreamInsert[]): string {
  const streams = inserts.map((insert) => {
    let middle = '';
    const metadataJcs = repeated(jcs);
    const events = insert.events.map((e) => {
      const metadata = metadataOf(e, insert);
      const parts = canonicalParts({ streamId: insert.streamId, type: e.type, data: e.data, metadata }, metadataJcs(metadata));
      middle = parts.middle;
      return { head: parts.head, tail: parts.tail, ...(e.recordedAt ? { recorded_at: e.recordedAt } : {}) };
    });
    return { stream_id: insert.streamId, stream_type: insert.streamType, expected: insert.expectedVersion, middle, events };
  });
  return JSON.stringify(streams);
}

/**
 * The events with their hashes, as JSON text written around the canonical texts the hashes need
 * anyway (JCS text is JSON): nothing is serialised twice. A stream's metadata is sent once when
 * every event has the same.
 */
function chainedHerePayload(inserts: readonly StreamInsert[], previous: readonly string[]): string {
  const recordedAt = new Date().toISOString();
  const stamp = { time: canonicalTime(recordedAt), json: `,"recorded_at":"${recordedAt}","hash":"` };
  return `[${inserts.map((insert, s) => chainedStreamPayload(insert, previous[s]!, stamp)).join(',')}]`;
}

function chainedStreamPayload(insert: StreamInsert, previous: string, stamp: { time: string; json: string }): string {
  let link = previous;
  const metadataJcs = repeated(jcs);
  const hashed = insert.events.map((e, i) => {
    const metadata = metadataOf(e, insert);
    const metadataText = metadataJcs(metadata);
    const dataText = jcs(e.data);
    const { head, middle, tail } = canonicalParts({ streamId: insert.streamId, type: e.type, data: e.data, metadata }, metadataText, dataText);
    link = chainHash(link, `${head}${stamp.time}${middle}${insert.expectedVersion! + i + 1}${tail}`);
    return { type: e.type, dataText, metadataText, hash: link };
  });
  const shared = hashed.every((h) => h.metadataText === hashed[0]!.metadataText) ? hashed[0]!.metadataText : undefined;
  const events = hashed.map(
    (h) => `{"type":${JSON.stringify(h.type)},"data":${h.dataText}${shared === undefined ? `,"metadata":${h.metadataText}` : ''}${stamp.json}${h.hash}"}`,
  );
  const head = `"stream_id":${JSON.stringify(insert.streamId)},"stream_type":${JSON.stringify(insert.streamType)},"expected":${insert.expectedVersion},"previous":"${previous}"`;
  return `{${head}${shared === undefined ? '' : `,"metadata":${shared}`},"events":[${events.join(',')}]}`;
}

/** A stream the statement left out moved on without this process: its remembered head is stale. */
function forgetLeftOut(heads: ChainHeads | undefined, inserts: readonly StreamInsert[], rows: readonly InsertedRow[]): void {
  const inserted = new Set(rows.map((row) => row.stream_id));
  for (const insert of inserts) if (!inserted.has(insert.streamId)) heads?.forget(insert.streamId);
}

/** The inserted rows joined to the events asked for: a stream's rows start at its first new position. */
function recordedFromInsert(inserts: readonly StreamInsert[], rows: readonly InsertedRow[]): RecordedEvent[] {
  const firstPosition = new Map<string, number>();
  for (const row of rows) {
    const first = firstPosition.get(row.stream_id);
    if (first === undefined || row.stream_position < first) firstPosition.set(row.stream_id, row.stream_position);
  }
  const byStream = new Map(inserts.map((insert) => [insert.streamId, insert]));
  const metadataAsJsonb = repeated((metadata: EventMetadata) => asJsonb(metadata) as EventMetadata);
  return rows
    .map((row) => {
      const insert = byStream.get(row.stream_id)!;
      const event = insert.events[row.stream_position - firstPosition.get(row.stream_id)!]!;
      return {
        globalPosition: row.global_position,
        streamId: row.stream_id,
        streamType: insert.streamType,
        streamPosition: row.stream_position,
        type: event.type,
        data: asJsonb(event.data) as RecordedEvent['data'],
        metadata: metadataAsJsonb(metadataOf(event, insert)),
        transactionId: row.transaction_id,
        recordedAt: row.recorded_at,
        hash: row.hash,
      };
    })
    .sort((a, b) => a.globalPosition - b.globalPosition);
}

export function checkExpectedVersion(expectedVersion: AppendToStream['expectedVersion']): void {
  if (expectedVersion !== 'any' && (!Number.isInteger(expectedVersion) || expectedVersion < 0)) {
    throw new RangeError(`expectedVersion must be a non-negative integer or 'any' (got ${expectedVersion})`);
  }
}

/** Checks the requests and inserts them; a unique-key collision (a concurrent writer) is a version conflict. */
export async function insertStreams(client: Queryable, requests: readonly CalledAppend[], heads: ChainHeads | undefined): Promise<RecordedEvent[]> {
  const streams = new Set<string>();
  for (const { streamId, expectedVersion } of requests) {
    checkExpectedVersion(expectedVersion);
    if (streams.has(streamId)) throw new RangeError(`stream ${streamId} is appended to twice in one call`);
    streams.add(streamId);
  }
  const inserts = requests
    .filter((r) => r.events.length > 0)
    .map((r) => ({
      streamId: r.streamId,
      streamType: r.streamType ?? streamTypeOf(r.streamId),
      expectedVersion: r.expectedVersion === 'any' ? null : r.expectedVersion,
      metadata: r.metadata,
      events: r.events,
    }));
  if (inserts.length === 0) return [];
  try {
    return await insertEvents(client, inserts, heads);
  } catch (error) {
    const collided = streamOfPositionCollision(error);
    if (collided === undefined) throw error;
    const request = requests.find((r) => r.streamId === collided) ?? requests[0]!;
    throw new VersionConflictError(request.streamId, request.expectedVersion, null);
  }
}

/**
 * The stream whose position another writer took first ('' when the detail does not name it), or
 * undefined for any other error. PostgreSQL names the key in the detail:
 * `Key (stream_id, stream_position)=(run-..., 3) already exists.`
 */
function streamOfPositionCollision(error: unknown): string | undefined {
  const pgError = error as Partial<DatabaseError>;
  if (pgError?.code !== '23505' || pgError.constraint !== 'events_stream_position_key') return undefined;
  return /^Key \(stream_id, stream_position\)=\((.*), \d+\) already exists/.exec(pgError.detail ?? '')?.[1] ?? '';
}
