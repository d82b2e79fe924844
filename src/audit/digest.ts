// A checkpoint's digest: a running SHA-256 over event hashes in the gated (transaction_id, global_position) order.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { ZERO_HASH } from '../eventstore/canonical.js';
import { jcs } from '../kernel/jcs.js';
import { prefetchedPages, selectHashesBetween, type Horizon } from './queries.js';

export const CHECKPOINT_STREAM = 'audit-checkpoints';
export const CHECKPOINT_EVENT = 'AuditCheckpointSigned';

/** What a checkpoint commits to and signs (the event's data is this plus `jws`). */
export interface CheckpointBody {
  sequence: number;
  horizon: Horizon;
  /** Events up to the horizon, this checkpoint's own predecessors included. */
  events: number;
  /** SHA-256(previous_digest || hash of every event in (previous horizon, horizon], in gated order), hex. */
  digest: string;
  previous_digest: string;
  signed_at: string;
  kid: string;
}

export interface Checkpoint extends CheckpointBody {
  jws: string;
}

/** The state before the first checkpoint. */
export const GENESIS = { horizon: { transaction_id: '0', global_position: 0 }, events: 0, digest: ZERO_HASH };

/** The exact bytes a checkpoint's JWS signs: JCS of its body. */
export function signedPayload(body: CheckpointBody): string {
  const { sequence, horizon, events, digest, previous_digest, signed_at, kid } = body;
  return jcs({ sequence, horizon, events, digest, previous_digest, signed_at, kid });
}

export interface Fold {
  digest: string;
  /** Events folded. */
  count: number;
  /** Of which outside the checkpoint stream (a checkpoint of nothing but checkpoints is not written). */
  others: number;
}

/** Extends `previousDigest` by the events in (after, upTo], read in pages with a cursor. */
export async function foldDigest(client: Queryable, previousDigest: string, after: Horizon, upTo: Horizon): Promise<Fold> {
  const hash = createHash('sha256').update(Buffer.from(previousDigest, 'hex'));
  let count = 0;
  let others = 0;
  const pages = prefetchedPages(
    (cursor: Horizon | null) => selectHashesBetween(client, cursor ?? after, upTo, 10_000),
    (last) => ({ transaction_id: last.transaction_id, global_position: last.global_position }),
  );
  for await (const page of pages) {
    for (const row of page) {
      hash.update(Buffer.from(row.hash ?? ZERO_HASH, 'hex'));
      count += 1;
      if (row.stream_id !== CHECKPOINT_STREAM) others += 1;
    }
  }
  return { digest: hash.digest('hex'), count, others };
}
