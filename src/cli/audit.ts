// The keys `svc audit verify` and `svc runs verify` trust: the configured signing key's, and a JWKS given by URL or file.
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

/** SVC_SIGNING_KEY's public key (when set) plus the keys of `jwks`. */
export async function trustedKeys(jwks: string | undefined): Promise<JSONWebKeySet> {
  const signingKeyHex = loadSettings().signingKeyHex;
  const own = signingKeyHex ? (await loadSigningKeys(signingKeyHex)).jwks.keys : [];
  const extra = jwks ? (await readJwks(jwks)).keys : [];
  return { keys: [...own, ...extra] };
}
