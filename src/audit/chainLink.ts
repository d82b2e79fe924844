// One link of a hash chain checked, and a page of links: pure, so a hashing thread can run it.
import { canonicalParts, chainHash, ZERO_HASH } from '../eventstore/canonical.js';
import { jcs } from '../kernel/jcs.js';
import type { JsonObject } from '../kernel/json.js';
import type { ChainLinkRow } from './queries.js';

/** The first place a check failed. */
export interface Broken {
  stream_id: string;
  stream_position: number;
  reason: string;
}

/** Where a chain walk is: the stream it is in, the position it expects next and the hash that position must chain from. */
export interface ChainState {
  streamId: string | null;
  expected: number;
  previousHash: string;
}

export const WALK_START: Readonly<ChainState> = Object.freeze({ streamId: null, expected: 1, previousHash: ZERO_HASH });

/** A page of events in stream order and the walk's state before its first row. */
export interface PageJob {
  rows: ChainLinkRow[];
  before: ChainState;
}

export interface PageResult {
  /** Rows found intact before the break (all of them when there is none). */
  checked: number;
  broken: Broken | null;
}

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
  const [streamId, position, type, dataText, metadata, recordedAt, hash] = event;
  if (streamId !== state.streamId) Object.assign(state, { streamId, expected: 1, previousHash: ZERO_HASH });
  const at = { stream_id: streamId, stream_position: state.expected };
  if (position !== state.expected) return { ...at, reason: `event missing: the stream goes on at position ${position}` };
  if (hash === null) return { ...at, reason: 'event has no hash' };
  const data = JSON.parse(dataText) as JsonObject;
  const { head, middle, tail } = canonicalParts({ streamId, type, data, metadata: {} }, canonicalMetadata(memory, metadata));
  if (chainHash(state.previousHash, `${head}${recordedAt}${middle}${position}${tail}`) !== hash) {
    return { ...at, reason: 'hash mismatch: the event or its predecessor was changed, inserted or moved, or its hash rewritten' };
  }
  state.expected += 1;
  state.previousHash = hash;
  return null;
}

/** Checks a page from the state before it; stops at its first break. */
export function checkPage(job: PageJob, memory: Map<string, string>): PageResult {
  const state = { ...job.before };
  for (let index = 0; index < job.rows.length; index++) {
    const broken = checkLink(state, job.rows[index]!, memory);
    if (broken) return { checked: index, broken };
  }
  return { checked: job.rows.length, broken: null };
}

/**
 * The walk's state after a page, read off its last row: what the next page chains from. (If the
 * page is broken, its own break comes first in stream order, so the next page's result is unused.)
 */
export function stateAfter(rows: readonly ChainLinkRow[]): ChainState {
  const [streamId, position, , , , , hash] = rows.at(-1)!;
  return { streamId, expected: position + 1, previousHash: hash ?? ZERO_HASH };
}
