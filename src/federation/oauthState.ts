// One-time OAuth states in PostgreSQL: any worker can finish a login another one started, once.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/pool.js';

export const STATE_TTL_SECONDS = 600;

const hash = (value: string) => createHash('sha256').update(value).digest('hex');

export interface PendingLogin {
  provider: string;
  codeVerifier: string;
  nonce: string;
  bindingHash: string;
  expired: boolean;
}

export async function saveState(
  db: Queryable,
  state: string,
  login: { provider: string; codeVerifier: string; nonce: string; binding: string },
): Promise<void> {
  await db.query(
    `INSERT INTO svc_oauth_states (state_hash, provider, code_verifier, nonce, binding_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 second')`,
    [hash(state), login.provider, login.codeVerifier, login.nonce, hash(login.binding), STATE_TTL_SECONDS],
  );
  // Keep the table small: states nobody came back for.
  await db.query("DELETE FROM svc_oauth_states WHERE expires_at < now() - interval '1 hour'");
}

/** Removes the state and answers what it held; a second consumer finds nothing. */
export async function consumeState(db: Queryable, state: string): Promise<PendingLogin | undefined> {
  const { rows } = await db.query<{ provider: string; code_verifier: string; nonce: string; binding_hash: string; expired: boolean }>(
    `DELETE FROM svc_oauth_states WHERE state_hash = $1
     RETURNING provider, code_verifier, nonce, binding_hash, expires_at < now() AS expired`,
    [hash(state)],
  );
  const row = rows[0];
  return row && { provider: row.provider, codeVerifier: row.code_verifier, nonce: row.nonce, bindingHash: row.binding_hash, expired: row.expired };
}

export function bindingMatches(login: PendingLogin, cookie: string | undefined): boolean {
  return cookie !== undefined && hash(cookie) === login.bindingHash;
}
