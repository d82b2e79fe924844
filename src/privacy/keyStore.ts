// SQL over svc_data_keys and the fallback KEK; every function receives its client.
import type { Queryable } from '../db/pool.js';

export interface Subject {
  type: string;
  id: string;
}

export interface StoredKey {
  key_id: string;
  subject_type: string;
  subject_id: string;
  wrapped_key: string | null;
  kek_id: string | null;
  destroyed_at: Date | null;
}

const COLUMNS = 'key_id, subject_type, subject_id, wrapped_key, kek_id, destroyed_at';

/** A key made in memory and not stored yet: its owner stores it in the transaction of the first value sealed with it. */
export interface NewKey {
  keyId: string;
  subject: Subject;
  wrapped: string;
  kekId: string;
}

/** Stores new keys in one statement; a subject that has a key already fails it (a new key's subject is new by construction). */
export async function insertNewKeys(db: Queryable, keys: readonly NewKey[]): Promise<void> {
  await db.query(
    `INSERT INTO svc_data_keys (key_id, subject_type, subject_id, wrapped_key, kek_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[])`,
    [keys.map((k) => k.keyId), keys.map((k) => k.subject.type), keys.map((k) => k.subject.id), keys.map((k) => k.wrapped), keys.map((k) => k.kekId)],
  );
}

/**
 * Inserts a subject's key unless it has one (live or destroyed); answers the one that stands, in
 * one round trip when it can. A key a concurrent transaction committed while this statement waited
 * on the conflict is outside the statement's snapshot: then a second read finds it.
 */
export async function insertKeyIfAbsent(db: Queryable, subject: Subject, keyId: string, wrapped: string, kekId: string): Promise<StoredKey> {
  const { rows } = await db.query<StoredKey>(
    `WITH inserted AS (
       INSERT INTO svc_data_keys (key_id, subject_type, subject_id, wrapped_key, kek_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (subject_type, subject_id) DO NOTHING
       RETURNING ${COLUMNS}
     )
     SELECT ${COLUMNS} FROM inserted
     UNION ALL
     SELECT ${COLUMNS} FROM svc_data_keys WHERE subject_type = $2 AND subject_id = $3 AND NOT EXISTS (SELECT 1 FROM inserted)`,
    [keyId, subject.type, subject.id, wrapped, kekId],
  );
  return rows[0] ?? (await findSubjectKey(db, subject))!;
}

export async function findKeysById(db: Queryable, keyIds: readonly string[]): Promise<StoredKey[]> {
  const { rows } = await db.query<StoredKey>(`SELECT ${COLUMNS} FROM svc_data_keys WHERE key_id = ANY($1::uuid[])`, [keyIds]);
  return rows;
}

export async function findSubjectKey(db: Queryable, subject: Subject): Promise<StoredKey | undefined> {
  const { rows } = await db.query<StoredKey>(`SELECT ${COLUMNS} FROM svc_data_keys WHERE subject_type = $1 AND subject_id = $2`, [subject.type, subject.id]);
  return rows[0];
}

/**
 * Destroys a subject's key (or records a tombstone for one that never had a key, so none is made
 * later). Answers whether this call destroyed it (false: it was destroyed already).
 */
export async function destroySubjectKey(db: Queryable, subject: Subject, tombstoneKeyId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO svc_data_keys (key_id, subject_type, subject_id, wrapped_key, kek_id, destroyed_at) VALUES ($1, $2, $3, NULL, NULL, now())
     ON CONFLICT (subject_type, subject_id) DO UPDATE SET wrapped_key = NULL, kek_id = NULL, destroyed_at = now()
     WHERE svc_data_keys.destroyed_at IS NULL`,
    [tombstoneKeyId, subject.type, subject.id],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Keys of subjects named `<owner>:<item>` (a run's: `<user id>:<run id>`): all of an owner's, or the
 * one of an item. Both use the expression indexes of db/0022. Answers how many were destroyed.
 */
export async function destroyKeysOwnedBy(db: Queryable, subjectType: string, ownerId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE svc_data_keys SET wrapped_key = NULL, kek_id = NULL, destroyed_at = now()
     WHERE subject_type = $1 AND split_part(subject_id, ':', 1) = $2 AND destroyed_at IS NULL`,
    [subjectType, ownerId],
  );
  return rowCount ?? 0;
}

export async function destroyKeysOfItem(db: Queryable, subjectType: string, itemId: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE svc_data_keys SET wrapped_key = NULL, kek_id = NULL, destroyed_at = now()
     WHERE subject_type = $1 AND split_part(subject_id, ':', 2) = $2 AND destroyed_at IS NULL`,
    [subjectType, itemId],
  );
  return rowCount ?? 0;
}

/** Live keys wrapped with a KEK other than `kekId`, a batch at a time, locked for the rewrap. */
export async function lockKeysNotWrappedWith(db: Queryable, kekId: string, limit: number): Promise<StoredKey[]> {
  const { rows } = await db.query<StoredKey>(
    `SELECT ${COLUMNS} FROM svc_data_keys WHERE wrapped_key IS NOT NULL AND kek_id <> $1 ORDER BY key_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [kekId, limit],
  );
  return rows;
}

export async function rewrapKey(db: Queryable, keyId: string, wrapped: string, kekId: string): Promise<void> {
  await db.query('UPDATE svc_data_keys SET wrapped_key = $2, kek_id = $3 WHERE key_id = $1 AND wrapped_key IS NOT NULL', [keyId, wrapped, kekId]);
}

export async function countKeysByKek(db: Queryable): Promise<{ kek_id: string | null; count: number }[]> {
  const { rows } = await db.query<{ kek_id: string | null; count: string }>(
    'SELECT kek_id, count(*) AS count FROM svc_data_keys GROUP BY kek_id ORDER BY kek_id',
  );
  return rows.map((row) => ({ kek_id: row.kek_id, count: Number(row.count) }));
}

/** The database-kept KEK of a deployment without SVC_DATA_KEY: made once, shared by every process. */
export async function fallbackKek(db: Queryable, candidateHex: string): Promise<string> {
  await db.query('INSERT INTO svc_data_kek_fallback (kek) VALUES ($1) ON CONFLICT (id) DO NOTHING', [candidateHex]);
  const { rows } = await db.query<{ kek: string }>('SELECT kek FROM svc_data_kek_fallback');
  return rows[0]!.kek;
}

export async function findFallbackKek(db: Queryable): Promise<string | undefined> {
  const { rows } = await db.query<{ kek: string }>('SELECT kek FROM svc_data_kek_fallback');
  return rows[0]?.kek;
}
