// Reading and sweeping svc_idempotency_keys.
import type { Queryable } from '../../db/pool.js';

export interface KeyRow {
  key_hash: string;
  workflow: string;
  run_id: string;
  request_hash: string;
  claimed_at: string;
  expires_at: string;
}

export async function findKey(db: Queryable, keyHash: string): Promise<KeyRow | undefined> {
  const { rows } = await db.query<KeyRow>(
    'SELECT key_hash, workflow, run_id, request_hash, claimed_at, expires_at FROM svc_idempotency_keys WHERE key_hash = $1',
    [keyHash],
  );
  return rows[0];
}

/** Deletes up to `limit` rows expired before `now`, oldest first, through the expires_at index; answers how many. */
export async function deleteExpiredKeys(db: Queryable, now: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM svc_idempotency_keys WHERE key_hash IN (
       SELECT key_hash FROM svc_idempotency_keys WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2)`,
    [now.toISOString(), limit],
  );
  return rowCount ?? 0;
}
