// Recomputes every stream's hash chain, walking the events table in stream order with a cursor.
import type { Queryable } from '../db/pool.js';
import { eventHash, ZERO_HASH } from '../eventstore/canonical.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { prefetchedPages, selectEventsInStreamOrder } from './queries.js';

/** The first place a check failed. */
export interface Broken {
  stream_id: string;
  stream_position: number;
  reason: string;
}

/** Where a chain walk is: the stream it is in, the position it expects next and the hash that position must chain from. */
interface ChainState {
  streamId: string | null;
  expected: number;
  previousHash: string;
}

const PAGE = 5000;

/** Checks one event against the walk so far; answers the break, or null and advances the walk. */
export function checkLink(state: ChainState, event: RecordedEvent): Broken | null {
  if (event.streamId !== state.streamId) Object.assign(state, { streamId: event.streamId, expected: 1, previousHash: ZERO_HASH });
  const at = { stream_id: event.streamId, stream_position: state.expected };
  if (event.streamPosition !== state.expected) return { ...at, reason: `event missing: the stream goes on at position ${event.streamPosition}` };
  if (event.hash === null) return { ...at, reason: 'event has no hash' };
  if (eventHash(state.previousHash, event) !== event.hash) {
    return { ...at, reason: 'hash mismatch: the event or its predecessor was changed, inserted or moved, or its hash rewritten' };
  }
  state.expected += 1;
  state.previousHash = event.hash;
  return null;
}

/** Walks every chain; stops at the first break. */
export async function verifyChains(client: Queryable): Promise<{ checked: number; broken: Broken | null }> {
  const state: ChainState = { streamId: null, expected: 1, previousHash: ZERO_HASH };
  let checked = 0;
  const pages = prefetchedPages(
    (cursor) => selectEventsInStreamOrder(client, cursor, PAGE),
    (last: RecordedEvent) => ({ streamId: last.streamId, streamPosition: last.streamPosition }),
  );
  for await (const page of pages) {
    for (const event of page) {
      const broken = checkLink(state, event);
      if (broken) return { checked, broken };
      checked += 1;
    }
  }
  return { checked, broken: null };
}
