// Event store vocabulary: what is appended, what is read back, and where a reader stands.
import type { JsonObject } from '../kernel/json.js';

/** Who caused an event and in which request; stored beside the data, never inside it. */
export interface EventMetadata extends JsonObject {}

export interface NewEvent<Type extends string = string, Data extends JsonObject = JsonObject> {
  type: Type;
  data: Data;
  metadata?: EventMetadata;
  /** Only for imports of events recorded elsewhere; otherwise the time of the append (see insertEvents). */
  recordedAt?: string;
}

export interface RecordedEvent<Type extends string = string, Data extends JsonObject = JsonObject> {
  globalPosition: number;
  streamId: string;
  streamType: string;
  /** 1-based, gapless within the stream. */
  streamPosition: number;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  /** xid8 of the writing transaction, as a decimal string. */
  transactionId: string;
  /** ISO 8601 with the database's microseconds. */
  recordedAt: string;
  /** Hex SHA-256 chaining the event to its stream's previous one (null only until the start-up backfill). */
  hash: string | null;
}

/** A stream's version is the position of its last event; 0 means the stream has no events. */
export const NO_STREAM = 0;

/** A number asks for exactly that version; `any` appends at whatever the end is. */
export type ExpectedVersion = number | 'any';

export interface AppendToStream {
  streamId: string;
  /** Defaults to the stream id's prefix before the first `-` (`run-<uuid>` -> `run`). */
  streamType?: string;
  expectedVersion: ExpectedVersion;
  events: NewEvent[];
}

export interface AppendResult {
  /** The version each stream is at after the append, keyed by stream id. */
  versions: Record<string, number>;
  events: RecordedEvent[];
}

/**
 * Where a global reader stands: the (transaction_id, global_position) of the last event it took.
 * Ordering by transaction id first is what makes the pg_snapshot_xmin gate skip nothing.
 */
export interface GlobalCursor {
  transactionId: string;
  globalPosition: number;
}

export const LOG_START: GlobalCursor = Object.freeze({ transactionId: '0', globalPosition: 0 });

export function streamTypeOf(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash > 0 ? streamId.slice(0, dash) : streamId;
}

export function cursorOf(event: RecordedEvent): GlobalCursor {
  return { transactionId: event.transactionId, globalPosition: event.globalPosition };
}

/** Orders cursors as PostgreSQL orders (xid8, bigint) pairs. */
export function compareCursors(a: GlobalCursor, b: GlobalCursor): number {
  const byTransaction = compareDecimal(a.transactionId, b.transactionId);
  return byTransaction !== 0 ? byTransaction : a.globalPosition - b.globalPosition;
}

function compareDecimal(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}
