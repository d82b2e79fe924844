// Password hashing with native bcrypt (cost 12, on libuv's thread pool, off the event loop).
import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import pLimit from 'p-limit';
import { BadRequestError } from '../kernel/errors.js';

export const BCRYPT_COST = 12;
/** bcrypt reads at most 72 bytes; we cut explicitly, byte-wise, so every path agrees on what counts. */
export const PASSWORD_BYTES_CONSIDERED = 72;
const MIN_PASSWORD_CHARS = 8;
const MAX_PASSWORD_BYTES = 1024;

/** The bytes bcrypt sees: the UTF-8 encoding cut to 72 bytes (possibly inside a character). */
export function passwordBytes(password: string): Buffer {
  return Buffer.from(password, 'utf8').subarray(0, PASSWORD_BYTES_CONSIDERED);
}

/** Rules for a new password (creation and change); login never reveals them. */
export function checkPasswordPolicy(password: string): void {
  if ([...password].length < MIN_PASSWORD_CHARS) throw new BadRequestError(`password must have at least ${MIN_PASSWORD_CHARS} characters`);
  if (isOversizePassword(password)) throw new BadRequestError(`password must be at most ${MAX_PASSWORD_BYTES} bytes`);
}

/** More bytes than checkPasswordPolicy lets a password have: no account can match it. */
export function isOversizePassword(password: string): boolean {
  return Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;
}

/** Queues bcrypt work beyond `concurrency` hashes at once (set from the settings at start). */
let hashing = pLimit(1);

export function limitPasswordHashing(concurrency: number): void {
  hashing = pLimit(concurrency);
}

export async function hashPassword(password: string): Promise<string> {
  return hashing(() => bcrypt.hash(passwordBytes(password), BCRYPT_COST));
}

let dummyHash: Promise<string> | undefined;

/**
 * Compares against the stored hash, or against a dummy hash when there is none, so a missing,
 * inactive or passwordless account costs the same time as a wrong password.
 */
export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  dummyHash ??= hashing(() => bcrypt.hash(randomBytes(16).toString('hex'), BCRYPT_COST));
  const target = hash ?? (await dummyHash);
  const matches = await hashing(() => bcrypt.compare(passwordBytes(password), target));
  return hash !== null && matches;
}

/** Computes the dummy hash ahead of the first login. */
export async function warmUpPasswordHashing(): Promise<void> {
  await verifyPassword('', null);
}
