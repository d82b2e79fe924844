// Per-subject data keys: seal a subject's personal values, open stored envelopes, erase a subject.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { ConflictError, DataIntegrityError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import { blindIndexOf, isEnvelope, kekIdOf, openValue, parseEnvelope, sealValue, unwrapKey, wrapKey } from './envelope.js';
import {
  destroyKeysOfItem,
  destroyKeysOwnedBy,
  destroySubjectKey,
  findKeysById,
  findSubjectKey,
  insertKeyIfAbsent,
  type NewKey,
  type StoredKey,
  type Subject,
} from './keyStore.js';

export type { Subject } from './keyStore.js';

/** The key-encryption keys this process holds: the current one wraps new keys, a previous one still opens. */
export interface Keks {
  current: Buffer;
  previous?: Buffer;
}

/** The subject that holds the blind-index key: a data key like the others, never erased. */
const BLIND_INDEX_SUBJECT: Subject = { type: 'system', id: 'blind-index' };
/** Seal keys kept per process: a subject's values are sealed in bursts (a user's email and phone). */
const SEAL_CACHE_LIMIT = 1000;

export const userSubject = (userId: string): Subject => ({ type: 'user', id: userId });
/** A model record, by its id (uuids: unique across models). */
export const recordSubject = (recordId: string): Subject => ({ type: 'record', id: recordId });

export class DataKeys {
  private readonly byKekId: Map<string, Buffer>;
  private readonly currentKekId: string;
  private readonly sealKeys = new Map<string, { keyId: string; key: Buffer }>();
  private blindKey: Promise<Buffer> | undefined;

  constructor(
    private readonly db: Queryable,
    keks: Keks,
  ) {
    this.currentKekId = kekIdOf(keks.current);
    this.byKekId = new Map([[this.currentKekId, keks.current]]);
    if (keks.previous) this.byKekId.set(kekIdOf(keks.previous), keks.previous);
  }

  /** Seals a value with the subject's key (made on first use); an erased subject takes no new data. */
  async seal(subject: Subject, value: string): Promise<string> {
    const { keyId, key } = await this.subjectKey(subject);
    return sealValue(key, keyId, value);
  }

  /**
   * A synchronous sealer for one subject (its key looked up once): a run seals many values with it.
   * `owner`: the subject the values belong to (a run's principal): once it is erased, nothing new is sealed for it.
   */
  async sealerFor(subject: Subject, owner?: Subject): Promise<(plaintext: string) => string> {
    await this.refuseErased(owner);
    const { keyId, key } = await this.subjectKey(subject);
    return (plaintext) => sealValue(key, keyId, plaintext);
  }

  /**
   * A sealer with a key made here for a subject that has none yet (a new run), not stored: the caller
   * stores `newKey` in the transaction of the first value sealed with it, so the key costs a row in
   * that commit rather than a commit of its own. A key that never reached the table opens nothing,
   * and neither does a value sealed with it that did not commit with it.
   */
  async newSubjectSealer(subject: Subject, owner?: Subject): Promise<{ seal: (plaintext: string) => string; newKey: NewKey }> {
    await this.refuseErased(owner);
    const { key, newKey } = this.makeKey(subject);
    return { seal: (plaintext) => sealValue(key, newKey.keyId, plaintext), newKey };
  }

  /** Values of an erased owner (a run's principal) are refused from now on. */
  private async refuseErased(owner: Subject | undefined): Promise<void> {
    if (!owner) return;
    const stored = await findSubjectKey(this.db, owner);
    if (stored?.destroyed_at) throw new ConflictError(`The ${owner.type} ${owner.id} was erased: it takes no new personal data`);
  }

  /** Destroys the keys of subjects of `type` whose id starts with `prefix:` (a user's runs); answers how many. */
  async eraseOwned(type: string, ownerId: string, db: Queryable = this.db): Promise<number> {
    for (const cached of this.sealKeys.keys()) if (cached.startsWith(`${type}\u0000${ownerId}:`)) this.sealKeys.delete(cached);
    return destroyKeysOwnedBy(db, type, ownerId);
  }

  /** Destroys the keys of subjects of `type` whose id ends with `:suffix` (an expired run's); answers how many. */
  async eraseByItem(type: string, itemId: string, db: Queryable = this.db): Promise<number> {
    for (const cached of this.sealKeys.keys()) if (cached.startsWith(`${type}\u0000`) && cached.endsWith(`:${itemId}`)) this.sealKeys.delete(cached);
    return destroyKeysOfItem(db, type, itemId);
  }

  async sealNullable(subject: Subject, value: string | null | undefined): Promise<string | null | undefined> {
    return typeof value === 'string' ? this.seal(subject, value) : value;
  }

  /** The keyed blind index of a value for equality lookups; `purpose` separates kinds (email, phone). */
  async blindIndex(purpose: string, value: string): Promise<string> {
    this.blindKey ??= this.subjectKey(BLIND_INDEX_SUBJECT).then(({ key }) => key);
    try {
      return blindIndexOf(await this.blindKey, purpose, value);
    } catch (error) {
      this.blindKey = undefined;
      throw error;
    }
  }

  /**
   * Opens every envelope found anywhere in `value` (a JSON value): a destroyed key's values become
   * null, a value that does not authenticate (or names a key this table never held) throws.
   * Values that are not envelopes pass through: this never turns plaintext into anything.
   */
  async openDeep<T>(value: T): Promise<T> {
    const envelopes = new Set<string>();
    collectEnvelopes(value, envelopes);
    if (envelopes.size === 0) return value;
    const opened = await this.openAll([...envelopes]);
    return replaceEnvelopes(value, opened) as T;
  }

  /**
   * Opens the named fields of rows that must hold envelopes (or null): a plain value there was not
   * written by svc, so it is a DataIntegrityError rather than a value to show.
   */
  async openFields<Row extends object>(rows: Row[], fields: readonly (keyof Row & string)[]): Promise<Row[]> {
    for (const row of rows) {
      for (const field of fields) {
        const value: unknown = row[field];
        if (value !== null && value !== undefined && !isEnvelope(value))
          throw new DataIntegrityError(`${field} holds a value that is not sealed (tampered?)`, { field });
      }
    }
    return this.openDeep(rows);
  }

  /**
   * Keeps envelopes as they are stored (the audit view: hashes recompute from them) except those of
   * an erased subject, which become null. A key id never held is left for verification to flag.
   */
  async nullErased<T>(value: T): Promise<T> {
    const envelopes = new Set<string>();
    collectEnvelopes(value, envelopes);
    if (envelopes.size === 0) return value;
    const keyIdOf = (envelope: string) => envelope.split(':')[2] ?? '';
    const destroyed = new Set(
      (await findKeysById(this.db, [...new Set([...envelopes].map(keyIdOf))].filter(isUuidText)))
        .filter((row) => row.wrapped_key === null)
        .map((row) => row.key_id),
    );
    const replaced = new Map([...envelopes].map((envelope) => [envelope, destroyed.has(keyIdOf(envelope)) ? null : envelope]));
    return replaceEnvelopes(value, replaced) as T;
  }

  /** Opens envelopes in one key look-up; the map answers null for an erased subject's values. */
  async openAll(values: readonly string[]): Promise<Map<string, string | null>> {
    const parsed = values.map((value) => ({ value, envelope: parseEnvelope(value) }));
    const keyIds = [...new Set(parsed.map((p) => p.envelope.keyId))];
    const stored = new Map((await findKeysById(this.db, keyIds)).map((row) => [row.key_id, row]));
    const keys = new Map<string, Buffer | null>();
    for (const keyId of keyIds) keys.set(keyId, this.unwrapStored(keyId, stored.get(keyId)));
    const result = new Map<string, string | null>();
    for (const { value, envelope } of parsed) {
      const key = keys.get(envelope.keyId)!;
      result.set(value, key === null ? null : openValue(key, envelope));
    }
    return result;
  }

  /** Destroys the subject's key: every value sealed with it reads as null from now on, everywhere. */
  async erase(subject: Subject, db: Queryable = this.db): Promise<boolean> {
    this.sealKeys.delete(cacheKey(subject));
    return destroySubjectKey(db, subject, randomUUID());
  }

  private unwrapStored(keyId: string, row: StoredKey | undefined): Buffer | null {
    if (!row) throw new DataIntegrityError(`A personal value names data key ${keyId}, which this service never held (tampered?)`, { keyId });
    if (row.wrapped_key === null) return null;
    const kek = this.byKekId.get(row.kek_id ?? '');
    if (!kek) {
      throw new DataIntegrityError(
        `Data key ${keyId} is wrapped with a key-encryption key this process does not hold (kek ${String(row.kek_id)}): set SVC_DATA_KEY (and SVC_DATA_KEY_PREVIOUS during a rotation)`,
        { keyId, kekId: row.kek_id },
      );
    }
    return unwrapKey(kek, keyId, row.wrapped_key);
  }

  /** A fresh 32-byte data key and its row, wrapped with the current KEK. */
  private makeKey(subject: Subject): { key: Buffer; newKey: NewKey } {
    // Time-ordered, like every id svc makes: a run's key lands beside the last one in the primary key's b-tree.
    const keyId = newId();
    // Drawn on its own, not from the nonces' pool: secret bytes never share a buffer with public ones.
    const key = randomBytes(32);
    return { key, newKey: { keyId, subject, wrapped: wrapKey(this.byKekId.get(this.currentKekId)!, keyId, key), kekId: this.currentKekId } };
  }

  private async subjectKey(subject: Subject): Promise<{ keyId: string; key: Buffer }> {
    const cached = this.sealKeys.get(cacheKey(subject));
    if (cached) return cached;
    const { newKey } = this.makeKey(subject);
    const row = await insertKeyIfAbsent(this.db, subject, newKey.keyId, newKey.wrapped, newKey.kekId);
    const key = this.unwrapStored(row.key_id, row);
    if (key === null) throw new ConflictError(`The ${subject.type} ${subject.id} was erased: it takes no new personal data`);
    const entry = { keyId: row.key_id, key };
    if (this.sealKeys.size >= SEAL_CACHE_LIMIT) this.sealKeys.delete(this.sealKeys.keys().next().value!);
    this.sealKeys.set(cacheKey(subject), entry);
    return entry;
  }
}

const isUuidText = (text: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(text);
const cacheKey = (subject: Subject) => `${subject.type}\u0000${subject.id}`;

function collectEnvelopes(value: unknown, into: Set<string>): void {
  if (isEnvelope(value)) into.add(value);
  else if (Array.isArray(value)) for (const item of value) collectEnvelopes(item, into);
  else if (isPlainObject(value)) for (const item of Object.values(value)) collectEnvelopes(item, into);
}

function replaceEnvelopes(value: unknown, opened: ReadonlyMap<string, string | null>): unknown {
  if (isEnvelope(value)) return opened.get(value) ?? null;
  if (Array.isArray(value)) return value.map((item) => replaceEnvelopes(item, opened));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, replaceEnvelopes(item, opened)]));
  }
  return value;
}

/** JSON objects only: a Date or a Buffer in a row passes through untouched. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
