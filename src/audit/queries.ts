// The audit's reads of the events table: every stream in (stream_id, stream_position) order, by keyset pages.
import type { Queryable } from '../db/pool.js';

/** Where a stream-order walk stands: the last (stream, position) it took. */
export interface StreamCursor {
  streamId: string;
  streamPosition: number;
}

/**
 * What the chain walk needs of an event, as an array (cheaper to read, and to hand to a hashing
 * thread, than an object per row): `recorded_at` already in its hashed shape (as the append writes
 * it), `metadata` as its stored text, which repeats from event to event and so is canonicalised
 * once per distinct text, and `data` as text, parsed by the thread that hashes it.
 */
export type ChainLinkRow = [streamId: string, streamPosition: number, type: string, data: string, metadata: string, recordedAt: string, hash: string | null];

/** The events after `cursor` in stream order (the unique key's index serves it), at most `limit`. */
export async function selectChainLinks(client: Queryable, cursor: StreamCursor | null, limit: number): Promise<ChainLinkRow[]> {
  const { rows } = await client.query<ChainLinkRow>({
    rowMode: 'array',
    text: `SELECT stream_id, stream_position, type, data::text AS data, metadata::text AS metadata,
            to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at, encode(hash, 'hex') AS hash
     FROM events
     WHERE $1::text IS NULL OR (stream_id, stream_position) > ($1::text, $2::bigint)
     ORDER BY stream_id, stream_position LIMIT $3`,
    values: [cursor?.streamId ?? null, cursor?.streamPosition ?? 0, limit],
  });
  return rows;
}

/** Pages of a keyset walk, the next one already asked for while the caller checks the current one. */
export async function* prefetchedPages<C, T>(fetch: (cursor: C | null) => Promise<T[]>, cursorOf: (last: T) => C): AsyncGenerator<T[]> {
  let pending = fetch(null);
  for (;;) {
    const page = await pending;
    if (page.length === 0) return;
    pending = fetch(cursorOf(page.at(-1)!));
    // An abandoned walk must not leave a rejection unhandled.
    pending.catch(() => undefined);
    yield page;
  }
}

/** A position in the gated global order. */
export interface Horizon {
  transaction_id: string;
  global_position: number;
}

export const LOG_ORIGIN: Horizon = Object.freeze({ transaction_id: '0', global_position: 0 });

/** Hashes (and streams) of the events in (after, upTo] in (transaction_id, global_position) order, at most `limit`. */
export async function selectHashesBetween(
  client: Queryable,
  after: Horizon,
  upTo: Horizon,
  limit: number,
): Promise<{ transaction_id: string; global_position: number; stream_id: string; hash: string | null }[]> {
  const { rows } = await client.query(
    `SELECT transaction_id::text AS transaction_id, global_position, stream_id, encode(hash, 'hex') AS hash FROM events
     WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint) AND (transaction_id, global_position) <= ($3::xid8, $4::bigint)
     ORDER BY events.transaction_id, events.global_position LIMIT $5`,
    [after.transaction_id, after.global_position, upTo.transaction_id, upTo.global_position, limit],
  );
  return rows;
}
