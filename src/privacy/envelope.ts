// The envelope of a personal value: AES-256-GCM with a subject's data key, as one string stored in events.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { DataIntegrityError } from '../kernel/errors.js';

/**
 * `enc:v1:<key id>:<nonce>:<ciphertext>:<tag>`, the last three base64url: a 12-byte random nonce, the
 * UTF-8 value encrypted, the 16-byte GCM tag. The key id (the data key's uuid) is also the additional
 * authenticated data, so a value moved under another subject's key id does not authenticate. Events
 * store this string, so the hash chains (over the stored event) cover the ciphertext.
 */
export const ENVELOPE_PREFIX = 'enc:v1:';
const ENVELOPE_PATTERN = /^enc:v1:([0-9a-f-]{36}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]*):([A-Za-z0-9_-]{22})$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface Envelope {
  keyId: string;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** Whether a stored value claims to be an envelope (it must then authenticate). */
export function isEnvelope(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(ENVELOPE_PREFIX);
}

/** The parts of an envelope; a value that starts like one but is malformed is a DataIntegrityError. */
export function parseEnvelope(value: string): Envelope {
  const match = ENVELOPE_PATTERN.exec(value);
  if (!match) throw new DataIntegrityError('A personal value is not a well-formed envelope (enc:v1:<key id>:<nonce>:<ciphertext>:<tag>)');
  return {
    keyId: match[1]!,
    nonce: Buffer.from(match[2]!, 'base64url'),
    ciphertext: Buffer.from(match[3]!, 'base64url'),
    tag: Buffer.from(match[4]!, 'base64url'),
  };
}

/**
 * Random bytes cut from one larger draw of the CSPRNG, as Node's randomUUID does: a run seals several
 * values, and one randomBytes call per nonce cost more than the encryption itself (a syscall each).
 * Each refill is a new buffer and every answer a copy, so nothing handed out changes afterwards.
 * For nonces (public): keys are drawn on their own.
 */
const randomSource = { pool: Buffer.alloc(0), offset: 0 };
const RANDOM_POOL_BYTES = 4096;

export function pooledRandomBytes(size: number): Buffer {
  if (size > RANDOM_POOL_BYTES) return randomBytes(size);
  if (randomSource.offset + size > randomSource.pool.length) {
    randomSource.pool = randomBytes(RANDOM_POOL_BYTES);
    randomSource.offset = 0;
  }
  return Buffer.from(randomSource.pool.subarray(randomSource.offset, (randomSource.offset += size)));
}

/** Seals `plaintext` with a 32-byte data key. */
export function sealValue(key: Buffer, keyId: string, plaintext: string): string {
  const nonce = pooledRandomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(keyId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const parts = [nonce, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64url'));
  return `${ENVELOPE_PREFIX}${keyId}:${parts.join(':')}`;
}

/** Opens an envelope with its data key; a value that does not authenticate is a DataIntegrityError. */
export function openValue(key: Buffer, envelope: Envelope): string {
  const decipher = createDecipheriv('aes-256-gcm', key, envelope.nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(envelope.keyId, 'utf8'));
  decipher.setAuthTag(envelope.tag);
  try {
    return Buffer.concat([decipher.update(envelope.ciphertext), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new DataIntegrityError(`A personal value sealed with data key ${envelope.keyId} does not authenticate (tampered or corrupted)`, {
      keyId: envelope.keyId,
      cause: String(error),
    });
  }
}

/** A data key wrapped by the KEK: `<nonce>.<ciphertext>.<tag>` (base64url), AAD the key id. */
export function wrapKey(kek: Buffer, keyId: string, dataKey: Buffer): string {
  return sealValue(kek, keyId, dataKey.toString('base64url'))
    .slice(ENVELOPE_PREFIX.length + keyId.length + 1)
    .replaceAll(':', '.');
}

export function unwrapKey(kek: Buffer, keyId: string, wrapped: string): Buffer {
  const [nonce = '', ciphertext = '', tag = ''] = wrapped.split('.');
  const envelope = parseEnvelope(`${ENVELOPE_PREFIX}${keyId}:${nonce}:${ciphertext}:${tag}`);
  return Buffer.from(openValue(kek, envelope), 'base64url');
}

/** The first 16 hex digits of HMAC-SHA256(KEK, "svc kek id"): names a KEK in svc_data_keys without revealing it. */
export function kekIdOf(kek: Buffer): string {
  return createHmac('sha256', kek).update('svc kek id').digest('hex').slice(0, 16);
}

/**
 * A keyed blind index: HMAC-SHA256 of the normalized value, hex. Equality lookups (login by email,
 * uniqueness claims) compare these, never the clear text; without the key they cannot be reversed
 * or checked against a guess.
 */
export function blindIndexOf(key: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', key).update(`${purpose}\u0000${value}`, 'utf8').digest('hex');
}
