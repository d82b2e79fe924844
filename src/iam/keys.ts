// The Ed25519 signing key: from SVC_SIGNING_KEY (hex seed), or ephemeral outside production.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

export interface SigningKeys {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** RFC 7638 thumbprint of the public key. */
  readonly kid: string;
  readonly jwks: { keys: JWK[] };
  readonly isEphemeral: boolean;
}

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * The key of a 32-byte seed in hex. Anything else is refused here too, not only by the settings:
 * OpenSSL would take a longer seed's first 32 bytes and sign with a key nobody wrote down.
 */
export function privateKeyFromHex(hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new RangeError('An Ed25519 private key is 64 hex characters (a 32-byte seed)');
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'pkcs8' });
}

export function generateSigningKeyHex(): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  return Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url').toString('hex');
}

export async function loadSigningKeys(signingKeyHex: string | undefined): Promise<SigningKeys> {
  const privateKey = signingKeyHex ? privateKeyFromHex(signingKeyHex) : generateKeyPairSync('ed25519').privateKey;
  const publicKey = createPublicKey(privateKey);
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  return {
    privateKey,
    publicKey,
    kid,
    jwks: { keys: [{ ...publicJwk, kid, alg: 'EdDSA', use: 'sig' }] },
    isEphemeral: signingKeyHex === undefined,
  };
}
