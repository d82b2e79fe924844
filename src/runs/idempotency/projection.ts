// Idempotency keys: one stream per key (`idempotency-<key hash>`), whose claims decide which run a key
// answers with; svc_idempotency_keys holds each key's latest claim.
import type { RecordedEvent } from '../../eventstore/types.js';
import type { JsonObject } from '../../kernel/json.js';
import { defineProjection, type Row } from '../../projections/types.js';

export const KEY_CLAIMED = 'idempotency_key_claimed';
/** The claim of `run_id` is given back: its run was never started (a concurrency limit refused it), so the key is free again. */
export const KEY_RELEASED = 'idempotency_key_released';

/**
 * A key taken for a run. Only hashes are kept: `key_hash` of the workflow, the caller and the key,
 * `request_hash` of the input (the same key with another input is refused).
 */
export interface IdempotencyKeyClaimed extends JsonObject {
  key_hash: string;
  workflow: string;
  run_id: string;
  request_hash: string;
  expires_at: string;
}

export interface IdempotencyKeyReleased extends JsonObject {
  key_hash: string;
  run_id: string;
  reason: string;
}

export const keyStream = (keyHash: string) => `idempotency-${keyHash}`;

/**
 * A rebuild restores every key's latest claim, expired ones too (evolve is pure: it cannot know what
 * has expired by now); lookups ignore a row past expires_at and the next sweep deletes it.
 */
export const idempotencyKeysProjection = defineProjection({
  name: 'svc_idempotency_keys',
  version: 1,
  table: 'svc_idempotency_keys',
  key: ['key_hash'],
  eventTypes: [KEY_CLAIMED, KEY_RELEASED],
  keysOf: (event: RecordedEvent) => [{ key_hash: String(event.data.key_hash) }],
  evolve(row: Row | null, _key, event): Row | null {
    // Only the claim it names: a later claim of the key stays.
    if (event.type === KEY_RELEASED) return row && row.run_id === event.data.run_id ? null : row;
    const claim = event.data as IdempotencyKeyClaimed;
    return {
      key_hash: claim.key_hash,
      workflow: claim.workflow,
      run_id: claim.run_id,
      request_hash: claim.request_hash,
      claimed_at: event.recordedAt,
      expires_at: claim.expires_at,
    };
  },
});
