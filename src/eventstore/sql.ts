// The event store's SQL, one statement per operation; every function receives its client.
import type { ClientBase } from 'pg';
import type { Queryable } from '../db/pool.js';
import { streamRows } from '../db/streamRows.js';
import { filterSql, type LogFilter } from './logFilter.js';
import type { EventMetadata, GlobalCursor, RecordedEvent } from './types.js';

export type { LogFilter } from './logFilter.js';

/**
 * The selected columns. transaction_id comes back as text under its own name, so an ORDER BY must
 * say events.transaction_id: the bare name means the output column and sorts '1000' before '999'
 * (and no index serves that sort).
 */
export const EVENT_COLUMNS = `global_position, stream_id, stream_type, stream_position, type, data, metadata,
  transaction_id::text AS transaction_id, recorded_at, encode(hash, 'hex') AS hash`;

export interface EventRow {
  global_position: number;
  stream_id: string;
  stream_type: string;
  stream_position: number;
  type: string;
  data: RecordedEvent['data'];
  metadata: EventMetadata;
  transaction_id: string;
  recorded_at: string;
  hash: string | null;
}

export function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    globalPosition: row.global_position,
    streamId: row.stream_id,
    streamType: row.stream_type,
    streamPosition: row.stream_position,
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    transactionId: row.transaction_id,
    recordedAt: row.recorded_at,
    hash: row.hash,
  };
}

/** toRecordedEvent of a row read as an array of EVENT_COLUMNS' values, in their order. */
function recordedEventOfValues(values: readonly unknown[]): RecordedEvent {
  return {
    globalPosition: values[0] as number,
    streamId: values[1] as string,
    streamType: values[2] as string,
    streamPosition: values[3] as number,
    type: values[4] as string,
    data: values[5] as RecordedEvent['data'],
    metadata: values[6] as EventMetadata,
    transactionId: values[7] as string,
    recordedAt: values[8] as string,
    hash: values[9] as string | null,
  };
}

export async function selectStreamVersion(client: Queryable, streamId: string): Promise<number> {
  const { rows } = await client.query<{ version: number }>('SELECT coalesce(max(stream_position), 0) AS version FROM events WHERE stream_id = $1', [streamId]);
  return rows[0]?.version ?? 0;
}

/** Events of one stream after `afterPosition`, in order. */
export async function selectStreamEvents(client: Queryable, streamId: string, afterPosition: number, limit: number): Promise<RecordedEvent[]> {
  const { rows } = await client.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
     WHERE stream_id = $1 AND stream_position > $2
     ORDER BY stream_position LIMIT $3`,
    [streamId, afterPosition, limit],
  );
  return rows.map(toRecordedEvent);
}

/**
 * The events of several streams, each after its own position (at most `limitPerStream` each), in
 * one round trip and without the gate: a stream's positions commit in order, so what is visible of
 * one stream has no gap. Answers them by stream (in the order asked), then position.
 */
export async function selectStreamsAfter(
  client: Queryable,
  streams: readonly { streamId: string; after: number }[],
  limitPerStream: number,
): Promise<RecordedEvent[]> {
  const { rows } = await client.query<EventRow>(
    `SELECT e.* FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS s(stream_id, after, ord)
     CROSS JOIN LATERAL (
       SELECT ${EVENT_COLUMNS} FROM events
       WHERE events.stream_id = s.stream_id AND events.stream_position > s.after
       ORDER BY events.stream_position LIMIT $3
     ) e
     ORDER BY s.ord, e.stream_position`,
    [streams.map((s) => s.streamId), streams.map((s) => s.after), limitPerStream],
  );
  return rows.map(toRecordedEvent);
}

/**
 * The global log after `cursor`, in (transaction_id, global_position) order, taking only
 * transactions older than every transaction still running: a late commit is never skipped.
 */
export async function selectGlobalEvents(client: Queryable, cursor: GlobalCursor, limit: number, filter: LogFilter = {}): Promise<RecordedEvent[]> {
  const { rows } = await client.query<EventRow>(globalEventsQuery(cursor, limit, filter));
  return rows.map(toRecordedEvent);
}

/** selectGlobalEvents' statement (test/audit/filterPlans.int.test.ts explains it: each filter has its index). */
export function globalEventsQuery(cursor: GlobalCursor, limit: number, filter: LogFilter): { text: string; values: unknown[] } {
  const where = filterSql(filter, 4);
  return {
    text: `SELECT ${EVENT_COLUMNS} FROM events
     WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
       AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       ${where.sql}
     ORDER BY events.transaction_id, events.global_position
     LIMIT $3`,
    values: [cursor.transactionId, cursor.globalPosition, limit, ...where.values],
  };
}

/**
 * A page of the gated log as selectGlobalEvents reads it, less the events of `skipped` transactions,
 * and the gate it read behind (the statement's xmin): after a page that is not full, every event of
 * a transaction older than the gate has been read or skipped.
 */
export async function selectTailPage(
  client: Queryable,
  cursor: GlobalCursor,
  limit: number,
  skipped: readonly string[],
): Promise<{ events: RecordedEvent[]; gate: string }> {
  const { rows } = await client.query<EventRow & { gate: string; xid: string | null }>(
    `SELECT g.xmin::text AS gate, e.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) g
     LEFT JOIN LATERAL (
       SELECT ${EVENT_COLUMNS}, events.transaction_id AS xid FROM events
       WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
         AND transaction_id < g.xmin AND transaction_id <> ALL($4::xid8[])
       ORDER BY events.transaction_id, events.global_position
       LIMIT $3
     ) e ON true
     ORDER BY e.xid, e.global_position`,
    [cursor.transactionId, cursor.globalPosition, limit, skipped],
  );
  return { events: rows.filter((row) => row.xid !== null).map(toRecordedEvent), gate: rows[0]!.gate };
}

/**
 * Events after `afterPosition` in global_position order, without the gate: either the caller reads
 * inside one REPEATABLE READ transaction, whose snapshot decides what is seen (a rebuild's replay),
 * or it can take events twice and out of order (RecentEvents). Within a stream this is stream order,
 * which (transaction_id, global_position) is not: a transaction that took its id early may append a
 * stream's next position after a younger one committed the previous.
 */
export async function selectEventsByPosition(client: Queryable, afterPosition: number, limit: number, filter: LogFilter = {}): Promise<RecordedEvent[]> {
  const query = eventsByPositionQuery(afterPosition, limit, filter);
  const { rows } = await client.query<EventRow>(query.text, query.values);
  return rows.map(toRecordedEvent);
}

/**
 * selectEventsByPosition handing each event to `onEvent` as it arrives (see streamRows); answers
 * how many there were.
 */
export function streamEventsByPosition(
  client: ClientBase,
  afterPosition: number,
  limit: number,
  filter: LogFilter,
  onEvent: (event: RecordedEvent) => void,
): Promise<number> {
  const query = eventsByPositionQuery(afterPosition, limit, filter);
  // Rows as arrays: no keyed object per row to build and drop again (a rebuild reads millions).
  return streamRows<unknown[]>(client, query.text, query.values, (row) => onEvent(recordedEventOfValues(row)), 'array');
}

function eventsByPositionQuery(afterPosition: number, limit: number, filter: LogFilter): { text: string; values: unknown[] } {
  const where = filterSql(filter, 3);
  return {
    text: `SELECT ${EVENT_COLUMNS} FROM events
     WHERE global_position > $1
       ${where.sql}
     ORDER BY events.global_position
     LIMIT $2`,
    values: [afterPosition, limit, ...where.values],
  };
}

/**
 * Committed events of transactions the snapshot (text of a pg_snapshot) did not see, in
 * global_position order. Only complete while the caller keeps later writers out (the projection swap).
 */
export async function selectCommittedOutsideSnapshot(client: Queryable, snapshot: string, filter: LogFilter = {}): Promise<RecordedEvent[]> {
  const where = filterSql(filter, 2);
  const { rows } = await client.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
     WHERE transaction_id >= pg_snapshot_xmin($1::pg_snapshot)
       AND NOT pg_visible_in_snapshot(transaction_id, $1::pg_snapshot)
       ${where.sql}
     ORDER BY events.global_position`,
    [snapshot, ...where.values],
  );
  return rows.map(toRecordedEvent);
}

/**
 * selectGate's statement; exported for the test that checks its plan. pg_current_snapshot() is the
 * statement's snapshot: both calls see the same one. Holding events is asked as "is the newest
 * transaction id at or past xmin": one step down the index from its end. (As `EXISTS (... WHERE
 * transaction_id >= xmin)` the planner, guessing a third of the rows match, scanned the whole table:
 * 40 ms at 100,000 events, several times a second.)
 */
export const GATE_SQL = `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
    coalesce((SELECT transaction_id FROM events ORDER BY transaction_id DESC LIMIT 1) >= pg_snapshot_xmin(pg_current_snapshot()), false)
      AS is_holding_events`;

/**
 * The gate now: `xmin`, the oldest transaction still running anywhere on the cluster, and whether
 * committed events wait behind it (gated readers cannot see them yet). Needs no privilege.
 */
export async function selectGate(client: Queryable): Promise<{ xmin: string; isHoldingEvents: boolean }> {
  const { rows } = await client.query<{ xmin: string; is_holding_events: boolean }>(GATE_SQL);
  return { xmin: rows[0]!.xmin, isHoldingEvents: rows[0]!.is_holding_events };
}

/** The highest global position of a committed event (0 for an empty log), gate or no gate. */
export async function selectLastPosition(client: Queryable): Promise<number> {
  const { rows } = await client.query<{ position: number | null }>('SELECT max(global_position) AS position FROM events');
  return rows[0]?.position ?? 0;
}

/** The cursor of the newest event a gated reader can see now (LOG_START when none). */
export async function selectGlobalHead(client: Queryable): Promise<GlobalCursor> {
  const { rows } = await client.query<{ transaction_id: string; global_position: number }>(
    `SELECT transaction_id::text AS transaction_id, global_position FROM events
     WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
     ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`,
  );
  const row = rows[0];
  return row ? { transactionId: row.transaction_id, globalPosition: row.global_position } : { transactionId: '0', globalPosition: 0 };
}
