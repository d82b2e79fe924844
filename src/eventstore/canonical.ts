// The hash chain's canonical form: RFC 8785 (JCS) of an event's stored fields, and its SHA-256 link.
import { hash } from 'node:crypto';
import { jcs } from '../kernel/jcs.js';
import type { JsonObject } from '../kernel/json.js';

/** The previous hash of a stream's first event. */
export const ZERO_HASH = '0'.repeat(64);

/** What the hash covers, exactly as a verifier reads it back from the events table. */
export interface CanonicalEvent {
  streamId: string;
  streamPosition: number;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
  recordedAt: string;
}

/**
 * A recorded time in its one hashed shape: ISO 8601 in UTC with exactly six fraction digits
 * (`2026-11-22T02:22:58.050000Z`). The append SQL writes the same shape with to_char.
 */
export function canonicalTime(iso: string): string {
  const match = /^(\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (!match) throw new RangeError(`not a UTC timestamp: ${iso}`);
  return `${match[1]}.${(match[2] ?? '').padEnd(6, '0')}Z`;
}

/**
 * The JCS text with its two database-chosen values left out: JCS sorts the keys (data, metadata,
 * recorded_at, stream_id, stream_position, type), so the text is `head` + time + `middle` +
 * position + `tail`, and the append statement splices in the time and position it decides.
 * `metadataText`, `dataText`: their JCS when the caller has it already.
 */
export function canonicalParts(
  event: { streamId: string; type: string; data: JsonObject; metadata: JsonObject },
  metadataText = jcs(event.metadata),
  dataText = jcs(event.data),
): {
  head: string;
  middle: string;
  tail: string;
} {
  return {
    head: `{"data":${dataText},"metadata":${metadataText},"recorded_at":"`,
    middle: `","stream_id":${jcs(event.streamId)},"stream_position":`,
    tail: `,"type":${jcs(event.type)}}`,
  };
}

/** JCS of {stream_id, stream_position, type, data, metadata, recorded_at}. */
export function canonicalText(event: CanonicalEvent): string {
  const { head, middle, tail } = canonicalParts(event);
  return `${head}${canonicalTime(event.recordedAt)}${middle}${event.streamPosition}${tail}`;
}

/** Texts up to this size are hashed from one reused buffer (larger ones get their own). */
const REUSED_BUFFER_BYTES = 256 * 1024;
let linkBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * SHA-256 over the previous hash's 32 bytes and the canonical text's UTF-8, as hex. The append and
 * the verifier call this for every event: writing both into one reused buffer saves two
 * allocations and a hash update per event, and the one-shot `crypto.hash` (Node 20.12) half the
 * time of a Hash object (0.6 against 1.1 us for 400 bytes).
 */
export function chainHash(previousHex: string, text: string): string {
  const most = 32 + text.length * 3;
  if (most > REUSED_BUFFER_BYTES) return hash('sha256', Buffer.concat([Buffer.from(previousHex, 'hex'), Buffer.from(text, 'utf8')]), 'hex');
  if (most > linkBuffer.length) linkBuffer = Buffer.allocUnsafe(REUSED_BUFFER_BYTES);
  linkBuffer.write(previousHex, 0, 32, 'hex');
  const end = 32 + linkBuffer.write(text, 32, 'utf8');
  return hash('sha256', linkBuffer.subarray(0, end), 'hex');
}

export function eventHash(previousHex: string, event: CanonicalEvent): string {
  return chainHash(previousHex, canonicalText(event));
}
