// The keys `svc audit verify` and `svc runs verify|import` trust: a JWKS given by URL or file, else the configured signing key's.
import { readFile } from 'node:fs/promises';
import type { JSONWebKeySet } from 'jose';
import { loadSettings } from '../config/settings.js';
import { loadSigningKeys } from '../iam/keys.js';

/** A JWKS document from an http(s) URL or a file. */
export async function readJwks(source: string): Promise<JSONWebKeySet> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return (await response.json()) as JSONWebKeySet;
  }
  return JSON.parse(await readFile(source, 'utf8')) as JSONWebKeySet;
}

/** The keys of `jwks` when given (nothing else is read: an offline check needs no settings), else SVC_SIGNING_KEY's public key. */
export async function trustedKeys(jwks: string | undefined): Promise<JSONWebKeySet> {
  if (jwks) return readJwks(jwks);
  const signingKeyHex = loadSettings().signingKeyHex;
  return { keys: signingKeyHex ? (await loadSigningKeys(signingKeyHex)).jwks.keys : [] };
}
