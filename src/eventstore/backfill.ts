// Hashes the events stored before the hash chains existed (db/0014), once, before the service serves.
import type { Pool, Queryable } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { eventHash, ZERO_HASH } from './canonical.js';
import { EVENT_COLUMNS, toRecordedEvent, type EventRow } from './sql.js';
import type { RecordedEvent } from './types.js';

/** Serialises backfills across processes; an arbitrary constant shared by every svc process. */
const BACKFILL_LOCK_KEY = 7_312_004_014;
const PAGE = 2000;

/**
 * Gives every unhashed event its hash, stream by stream in position order. SQL cannot compute JCS,
 * so this is the code half of migration 0014. A session advisory lock makes a second process wait
 * and then find nothing to do; the partial index events_unhashed_idx makes that check free. Events
 * appended meanwhile onto an unhashed head are stored unhashed too, and this loop takes them next.
 */
export async function backfillEventHashes(pool: Pool, logger?: Logger): Promise<number> {
  const client = await pool.connect();
  let hashed = 0;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [BACKFILL_LOCK_KEY]);
    for (;;) {
      const { rows } = await client.query<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE hash IS NULL ORDER BY stream_id, stream_position LIMIT ${PAGE}`);
      if (rows.length === 0) break;
      const events = rows.map(toRecordedEvent);
      const hashes = await chainPage(client, events, logger);
      await client.query(
        `UPDATE events SET hash = decode(v.hash, 'hex') FROM unnest($1::bigint[], $2::text[]) AS v(global_position, hash)
         WHERE events.global_position = v.global_position AND events.hash IS NULL`,
        [events.map((e) => e.globalPosition), hashes],
      );
      hashed += events.length;
    }
    if (hashed > 0) logger?.info({ hashed }, 'event hash chains backfilled');
    return hashed;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [BACKFILL_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}

/** The hashes of a page of unhashed events (ordered by stream, then position), each chained to its predecessor. */
async function chainPage(client: Queryable, events: readonly RecordedEvent[], logger?: Logger): Promise<string[]> {
  const hashes: string[] = [];
  let previous: RecordedEvent | undefined;
  for (const [index, event] of events.entries()) {
    const isNext = previous?.streamId === event.streamId && previous.streamPosition === event.streamPosition - 1;
    const previousHash = isNext ? hashes[index - 1]! : await storedPreviousHash(client, event, logger);
    hashes.push(eventHash(previousHash, event));
    previous = event;
  }
  return hashes;
}

async function storedPreviousHash(client: Queryable, event: RecordedEvent, logger?: Logger): Promise<string> {
  if (event.streamPosition === 1) return ZERO_HASH;
  const { rows } = await client.query<{ hash: string | null }>(`SELECT encode(hash, 'hex') AS hash FROM events WHERE stream_id = $1 AND stream_position = $2`, [
    event.streamId,
    event.streamPosition - 1,
  ]);
  // A gap predates the chain: hash on from zero and let `svc audit verify` name the missing position.
  if (!rows[0]?.hash) logger?.warn({ stream_id: event.streamId, stream_position: event.streamPosition }, 'backfill: the previous event is missing');
  return rows[0]?.hash ?? ZERO_HASH;
}
