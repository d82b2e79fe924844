// Recomputes every stream's hash chain, walking the events table in stream order with a cursor.
import type { Queryable } from '../db/pool.js';
import { canonicalParts, chainHash, ZERO_HASH } from '../eventstore/canonical.js';
import { jcs } from '../kernel/jcs.js';
import { prefetchedPages, selectChainLinks, type ChainLinkRow } from './queries.js';

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

/** Distinct metadata texts remembered with their JCS; a walk meets few (one per request, mostly). */
const METADATA_MEMORY = 10_000;

/** The JCS of stored metadata text, from memory when the same text came before. */
function canonicalMetadata(memory: Map<string, string>, stored: string): string {
  let text = memory.get(stored);
  if (text === undefined) {
    if (memory.size >= METADATA_MEMORY) memory.clear();
    text = jcs(JSON.parse(stored));
    memory.set(stored, text);
  }
  return text;
}

/** Checks one event against the walk so far; answers the break, or null and advances the walk. */
export function checkLink(state: ChainState, event: ChainLinkRow, memory: Map<string, string>): Broken | null {
  if (event.stream_id !== state.streamId) Object.assign(state, { streamId: event.stream_id, expected: 1, previousHash: ZERO_HASH });
  const at = { stream_id: event.stream_id, stream_position: state.expected };
  if (event.stream_position !== state.expected) return { ...at, reason: `event missing: the stream goes on at position ${event.stream_position}` };
  if (event.hash === null) return { ...at, reason: 'event has no hash' };
  const metadataText = canonicalMetadata(memory, event.metadata);
  const { head, middle, tail } = canonicalParts({ streamId: event.stream_id, type: event.type, data: event.data, metadata: {} }, metadataText);
  if (chainHash(state.previousHash, `${head}${event.recorded_at}${middle}${event.stream_position}${tail}`) !== event.hash) {
    return { ...at, reason: 'hash mismatch: the event or its predecessor was changed, inserted or moved, or its hash rewritten' };
  }
  state.expected += 1;
  state.previousHash = event.hash;
  return null;
}

/** Walks every chain; stops at the first break. */
export async function verifyChains(client: Queryable): Promise<{ checked: number; broken: Broken | null }> {
  const state: ChainState = { streamId: null, expected: 1, previousHash: ZERO_HASH };
  const memory = new Map<string, string>();
  let checked = 0;
  const pages = prefetchedPages(
    (cursor) => selectChainLinks(client, cursor, PAGE),
    (last: ChainLinkRow) => ({ streamId: last.stream_id, streamPosition: last.stream_position }),
  );
  for await (const page of pages) {
    for (const event of page) {
      const broken = checkLink(state, event, memory);
      if (broken) return { checked, broken };
      checked += 1;
    }
  }
  return { checked, broken: null };
}
