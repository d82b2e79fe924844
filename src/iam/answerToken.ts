// Answering with a freshly minted token: no cache may keep it (RFC 6749 §5.1, `Cache-Control: no-store`).
import type { Response } from 'express';
import { tokenResponse } from './signIn.js';
import type { MintedToken } from './tokens.js';

/**
 * Every route that hands out a token answers through here (bootstrap, password login, refresh,
 * federated callback, the dev token), so none forgets the header.
 *
 * @example
 * answerToken(res, await auth.login(username, password)); // 200 {access_token, token_type, expires_in}, no-store
 */
export function answerToken(res: Response, minted: MintedToken, extra: Record<string, unknown> = {}): void {
  res.setHeader('Cache-Control', 'no-store');
  res.status(200).json({ ...tokenResponse(minted), ...extra });
}
