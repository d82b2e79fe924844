// Recomputes every checkpoint: its signature against trusted keys, its link to the previous one, and its digest over the log.
import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { Queryable } from '../db/pool.js';
import { selectStreamEvents } from '../eventstore/sql.js';
import type { Broken } from './chains.js';
import { checkpointOf } from './checkpoints.js';
import { CHECKPOINT_STREAM, foldDigest, GENESIS, signedPayload, type Checkpoint } from './digest.js';

/** Why a checkpoint's signature does not stand, or null when it does. */
export async function signatureProblem(checkpoint: Checkpoint, keys: JSONWebKeySet): Promise<string | null> {
  const jwks = createLocalJWKSet(keys);
  try {
    const { payload, protectedHeader } = await compactVerify(checkpoint.jws, jwks, { algorithms: ['EdDSA'] });
    if (protectedHeader.kid !== checkpoint.kid) return 'signed by another key than its kid says';
    if (new TextDecoder().decode(payload) !== signedPayload(checkpoint)) return 'signed content differs from the checkpoint';
    return null;
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === 'ERR_JWKS_NO_MATCHING_KEY' ? `signed by a key not trusted here (kid ${checkpoint.kid})` : 'signature does not verify';
  }
}

/**
 * Walks the checkpoints in order and, between consecutive horizons, the log in gated order (one
 * pass over the events overall). Events after the last horizon are not covered by any checkpoint.
 */
export async function verifyCheckpoints(client: Queryable, keys: JSONWebKeySet): Promise<{ checked: number; broken: Broken | null }> {
  let previous = { ...GENESIS, sequence: 0 };
  let checked = 0;
  for (;;) {
    const page = await selectStreamEvents(client, CHECKPOINT_STREAM, previous.sequence, 500);
    for (const event of page) {
      const checkpoint = checkpointOf(event);
      const broken = (reason: string): Broken => ({ stream_id: CHECKPOINT_STREAM, stream_position: event.streamPosition, reason });
      if (checkpoint.sequence !== event.streamPosition || checkpoint.previous_digest !== previous.digest) {
        return { checked, broken: broken('does not follow the previous checkpoint') };
      }
      const problem = await signatureProblem(checkpoint, keys);
      if (problem) return { checked, broken: broken(problem) };
      const fold = await foldDigest(client, previous.digest, previous.horizon, checkpoint.horizon);
      if (fold.digest !== checkpoint.digest || previous.events + fold.count !== checkpoint.events) {
        return { checked, broken: broken('digest mismatch: events up to its horizon were changed, added, removed or reordered since it was signed') };
      }
      checked += 1;
      previous = checkpoint;
    }
    if (page.length < 500) return { checked, broken: null };
  }
}
