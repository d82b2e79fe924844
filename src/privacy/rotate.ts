// `svc keys rotate-data-key`: every data key rewrapped with the current SVC_DATA_KEY; events untouched.
import type { Pool } from '../db/pool.js';
import { DataIntegrityError } from '../kernel/errors.js';
import { kekIdOf, unwrapKey, wrapKey } from './envelope.js';
import { countKeysByKek, findFallbackKek, lockKeysNotWrappedWith, rewrapKey } from './keyStore.js';

const BATCH = 500;

export interface RotationReport {
  /** The key-encryption key every live data key is wrapped with now. */
  kek_id: string;
  rewrapped: number;
  /** Live data keys per KEK after the rotation (all under `kek_id` when it succeeded). */
  keys_by_kek: { kek_id: string | null; count: number }[];
}

/**
 * Rewraps, in batches of one transaction each (locked rows, so two rotations at once share the work
 * and never rewrap a key twice), every data key wrapped with another KEK than `currentHex`: the
 * previous SVC_DATA_KEY (`previousHex`) or the database-kept key of a deployment that had none.
 * Only svc_data_keys changes: events hold values sealed with the data keys, which stay the same.
 */
export async function rotateDataKeys(pool: Pool, currentHex: string, previousHex: string | undefined): Promise<RotationReport> {
  const current = Buffer.from(currentHex, 'hex');
  const currentId = kekIdOf(current);
  const fallbackHex = await findFallbackKek(pool);
  const known = new Map<string, Buffer>();
  for (const hex of [previousHex, fallbackHex]) if (hex !== undefined) known.set(kekIdOf(Buffer.from(hex, 'hex')), Buffer.from(hex, 'hex'));
  let rewrapped = 0;
  for (;;) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const batch = await lockKeysNotWrappedWith(client, currentId, BATCH);
      for (const row of batch) {
        const kek = known.get(row.kek_id ?? '');
        if (!kek)
          throw new DataIntegrityError(`Data key ${row.key_id} is wrapped with kek ${String(row.kek_id)}: set SVC_DATA_KEY_PREVIOUS to that key`, {
            keyId: row.key_id,
          });
        await rewrapKey(client, row.key_id, wrapKey(current, row.key_id, unwrapKey(kek, row.key_id, row.wrapped_key!)), currentId);
      }
      await client.query('COMMIT');
      rewrapped += batch.length;
      if (batch.length < BATCH) break;
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }
  return { kek_id: currentId, rewrapped, keys_by_kek: (await countKeysByKek(pool)).filter((row) => row.kek_id !== null) };
}
