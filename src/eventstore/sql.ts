// The event store's SQL, one statement per operation; every function receives its client.
import type { Queryable } from '../db/pool.js';
import { asJsonb } from '../kernel/jsonbShape.js';
import { canonicalParts, ZERO_HASH } from './canonical.js';
import { filterSql, type LogFilter } from './logFilter.js';
import type { EventMetadata, GlobalCursor, NewEvent, RecordedEvent } from './types.js';

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

/** One stream's share of an insert: its events go at the end of the stream, if it is at `expectedVersion`. */
export interface StreamInsert {
  streamId: string;
  streamType: string;
  /** null: wherever the stream's end is. */
  expectedVersion: number | null;
  events: readonly NewEvent[];
  metadata: EventMetadata;
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
 * The statement answers only what the database decides (positions, time, transaction, hash): data
 * and metadata come from the request in jsonb's shape, as a read of the table would give them,
 * without sending the documents back and parsing them again.
 */
export async function insertEvents(client: Queryable, inserts: readonly StreamInsert[]): Promise<RecordedEvent[]> {
  const streams = inserts.map((insert) => {
    let middle = '';
    const events = insert.events.map((e) => {
      const metadata = e.metadata ? { ...insert.metadata, ...e.metadata } : insert.metadata;
      const parts = canonicalParts({ streamId: insert.streamId, type: e.type, data: e.data, metadata });
      middle = parts.middle;
      return { head: parts.head, tail: parts.tail, ...(e.recordedAt ? { recorded_at: e.recordedAt } : {}) };
    });
    return { stream_id: insert.streamId, stream_type: insert.streamType, expected: insert.expectedVersion, middle, events };
  });
  const { rows } = await client.query<InsertedRow>({ name: INSERT_EVENTS_STATEMENT, text: INSERT_EVENTS_SQL, values: [JSON.stringify(streams)] });
  return recordedFromInsert(inserts, rows);
}

/** The inserted rows joined to the events asked for: a stream's rows start at its first new position. */
function recordedFromInsert(inserts: readonly StreamInsert[], rows: readonly InsertedRow[]): RecordedEvent[] {
  const firstPosition = new Map<string, number>();
  for (const row of rows) {
    const first = firstPosition.get(row.stream_id);
    if (first === undefined || row.stream_position < first) firstPosition.set(row.stream_id, row.stream_position);
  }
  const byStream = new Map(inserts.map((insert) => [insert.streamId, insert]));
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
        metadata: asJsonb(event.metadata ? { ...insert.metadata, ...event.metadata } : insert.metadata) as EventMetadata,
        transactionId: row.transaction_id,
        recordedAt: row.recorded_at,
        hash: row.hash,
      };
    })
    .sort((a, b) => a.globalPosition - b.globalPosition);
}

/**
 * A named (prepared) statement: each connection parses and plans it once. Planning this statement
 * costs several times what executing it does, and appends are the hottest path of the service.
 */
const INSERT_EVENTS_STATEMENT = 'svc_insert_events_v5';
/**
 * Each stream's head (version and hash) is read once by a lateral join, in the statement that checks
 * the expected version: a concurrent writer of the same positions fails on the unique key, so the
 * head a successful insert chained from is the true one. The canonical text is the client's JCS with
 * the time and position spliced in; every stored column is read back out of that text, so what is
 * hashed is exactly what is stored. MATERIALIZED keeps the request's jsonb out of the
 * rows the window sorts; OFFSET 0 keeps the text parsed once per event.
 */
const INSERT_EVENTS_SQL = `WITH request AS (
       SELECT s.ordinality AS stream_order, s.value->>'stream_id' AS stream_id, s.value->>'stream_type' AS stream_type,
              (s.value->>'expected')::bigint AS expected, s.value->>'middle' AS middle, s.value->'events' AS events
       FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS s(value, ordinality)
     ), canonical AS MATERIALIZED (
       SELECT r.stream_order, r.stream_id, r.stream_type, e.ordinality, v.version + e.ordinality AS stream_position,
              CASE WHEN v.version = 0 THEN '\\x${ZERO_HASH}'::bytea ELSE v.hash END AS head,
              (e.value->>'head')
                || to_char(coalesce((e.value->>'recorded_at')::timestamptz, now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
                || r.middle || (v.version + e.ordinality)::text || (e.value->>'tail') AS text
       FROM request r
       CROSS JOIN LATERAL (
         SELECT coalesce(h.stream_position, 0) AS version, h.hash
         FROM (SELECT 1) one
         LEFT JOIN LATERAL (SELECT x.stream_position, x.hash FROM events x WHERE x.stream_id = r.stream_id ORDER BY x.stream_position DESC LIMIT 1) h ON true
       ) v
       CROSS JOIN LATERAL jsonb_array_elements(r.events) WITH ORDINALITY AS e(value, ordinality)
       WHERE r.expected IS NULL OR v.version = r.expected
     )
     INSERT INTO events (stream_id, stream_type, stream_position, type, data, metadata, recorded_at, hash)
     SELECT c.stream_id, c.stream_type, c.stream_position, d.doc->>'type', d.doc->'data', d.doc->'metadata', (d.doc->>'recorded_at')::timestamptz,
            svc_event_chain(c.head, c.text) OVER (PARTITION BY c.stream_order ORDER BY c.ordinality)
     FROM canonical c
     CROSS JOIN LATERAL (SELECT c.text::jsonb AS doc OFFSET 0) d
     ORDER BY c.stream_order, c.ordinality
     RETURNING global_position, stream_id, stream_position, transaction_id::text AS transaction_id, recorded_at, encode(hash, 'hex') AS hash`;

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
  const where = filterSql(filter, 4);
  const { rows } = await client.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
     WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
       AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       ${where.sql}
     ORDER BY events.transaction_id, events.global_position
     LIMIT $3`,
    [cursor.transactionId, cursor.globalPosition, limit, ...where.values],
  );
  return rows.map(toRecordedEvent);
}

/**
 * Events after `afterPosition` in global_position order, without the gate: either the caller reads
 * inside one REPEATABLE READ transaction, whose snapshot decides what is seen (a rebuild's replay),
 * or it can take events twice and out of order (RecentEvents). Within a stream this is stream order,
 * which (transaction_id, global_position) is not: a transaction that took its id early may append a
 * stream's next position after a younger one committed the previous.
 */
export async function selectEventsByPosition(client: Queryable, afterPosition: number, limit: number, filter: LogFilter = {}): Promise<RecordedEvent[]> {
  const where = filterSql(filter, 3);
  const { rows } = await client.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
     WHERE global_position > $1
       ${where.sql}
     ORDER BY events.global_position
     LIMIT $2`,
    [afterPosition, limit, ...where.values],
  );
  return rows.map(toRecordedEvent);
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
 * The gate now: `xmin`, the oldest transaction still running anywhere on the cluster, and whether
 * committed events wait behind it (gated readers cannot see them yet). Needs no privilege.
 */
export async function selectGate(client: Queryable): Promise<{ xmin: string; isHoldingEvents: boolean }> {
  // pg_current_snapshot() is the statement's snapshot: both calls see the same one. Not a FROM item
  // (a correlated value would make the planner scan the whole table instead of the index).
  const { rows } = await client.query<{ xmin: string; is_holding_events: boolean }>(
    `SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin,
            EXISTS (SELECT 1 FROM events WHERE transaction_id >= pg_snapshot_xmin(pg_current_snapshot())) AS is_holding_events`,
  );
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
