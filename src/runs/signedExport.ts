// Run exports carry each event's chain hash and a detached JWS over the whole export, checkable offline with the public key alone.
import { compactVerify, CompactSign, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { eventHash, ZERO_HASH } from '../eventstore/canonical.js';
import type { RecordedEvent } from '../eventstore/types.js';
import type { SigningKeys } from '../iam/keys.js';
import { jcs } from '../kernel/jcs.js';
import type { JsonObject } from '../kernel/json.js';
import { presentRunEvent } from './present.js';

/** The stored form an exported event stands for (the data a run event holds: agent_id, engine, payload). */
export function storedFormOf(streamId: string, event: JsonObject) {
  return {
    streamId,
    streamPosition: Number(event.seq),
    type: String(event.type),
    data: { agent_id: event.agent_id ?? null, engine: event.engine ?? null, payload: event.payload ?? null } as JsonObject,
    metadata: (event.metadata ?? {}) as JsonObject,
    recordedAt: String(event.ts),
  };
}

/**
 * A journal event as exported: as SSE shows it, plus its metadata and chain hash. `redacted` marks
 * an event whose shown payload is not what is stored (keys starting with `_` never leave the
 * server), so its hash can be taken from the signed export but not recomputed from it.
 */
export function exportedEvent(event: RecordedEvent, previousHash: string): JsonObject {
  const shown: JsonObject = { ...presentRunEvent(event), metadata: event.metadata, hash: event.hash };
  const isReproducible = event.hash !== null && eventHash(previousHash, storedFormOf(event.streamId, shown)) === event.hash;
  return isReproducible ? shown : { ...shown, redacted: true };
}

const encoder = new TextEncoder();

/** Detached compact JWS (RFC 7515 appendix F) over JCS of the export without its signature. */
export async function signExport(document: JsonObject, keys: SigningKeys): Promise<string> {
  const jws = await new CompactSign(encoder.encode(jcs(document))).setProtectedHeader({ alg: 'EdDSA', kid: keys.kid }).sign(keys.privateKey);
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

export interface ExportCheck {
  ok: boolean;
  kid: string | null;
  events: number;
  /** Events whose hash was recomputed from the export (the others are `redacted`). */
  recomputed: number;
  problem: string | null;
}

/** Checks an export's signature against `keys`, then its events' chain, with nothing else. */
export async function verifyExport(document: JsonObject, keys: JSONWebKeySet): Promise<ExportCheck> {
  const { signature, ...content } = document;
  const events = Array.isArray(content.events) ? (content.events as JsonObject[]) : [];
  const result: ExportCheck = { ok: false, kid: null, events: events.length, recomputed: 0, problem: null };
  const parts = typeof signature === 'string' ? signature.split('.') : [];
  if (parts.length !== 3 || parts[1] !== '') return { ...result, problem: 'no detached JWS signature' };
  try {
    const payload = Buffer.from(jcs(content)).toString('base64url');
    const { protectedHeader } = await compactVerify(`${parts[0]}.${payload}.${parts[2]}`, createLocalJWKSet(keys), { algorithms: ['EdDSA'] });
    result.kid = protectedHeader.kid ?? null;
  } catch (error) {
    const isUnknownKey = (error as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY';
    return { ...result, problem: isUnknownKey ? 'signed by a key not in the given JWKS' : 'signature does not verify: the export was changed after signing' };
  }
  return checkExportChain(String((content.run as JsonObject | undefined)?.id ?? ''), events, result);
}

function checkExportChain(runId: string, events: JsonObject[], result: ExportCheck): ExportCheck {
  let previous = ZERO_HASH;
  for (const [index, event] of events.entries()) {
    const hash = typeof event.hash === 'string' ? event.hash : '';
    if (Number(event.seq) !== index + 1 || !/^[0-9a-f]{64}$/.test(hash)) return { ...result, problem: `event ${index + 1}: not numbered in order, or no hash` };
    if (event.redacted !== true) {
      if (eventHash(previous, storedFormOf(`run-${runId}`, event)) !== hash)
        return { ...result, problem: `event ${index + 1}: hash does not match its content` };
      result.recomputed += 1;
    }
    previous = hash;
  }
  return { ...result, ok: true };
}
