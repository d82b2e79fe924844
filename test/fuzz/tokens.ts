// Bearer tokens for the fuzzer: a fresh valid one per request (so a fuzzed logout revokes only its
// own), a valid one without scopes, and forgeries from RFC 8725's list of attacks on JWTs.
import { createHmac, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { privateKeyFromHex } from '../../src/iam/keys.js';
import { TOKEN_ISSUER } from '../../src/iam/tokens.js';

export const TOKEN_KINDS = [
  'admin',
  'unscoped',
  'absent',
  'alg-none',
  'hs256-public-key',
  'wrong-kid',
  'expired',
  'bad-signature',
  'unknown-user',
  'garbage',
] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

/** Mostly the admin (to reach past authentication), often a forgery. */
export const tokenKind: fc.Arbitrary<TokenKind> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<TokenKind>('admin') },
  { weight: 4, arbitrary: fc.constantFrom<TokenKind>(...TOKEN_KINDS) },
);

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

export interface TokenMint {
  kid: string;
  /** The JWKS `x` of the service's public key. */
  publicX: string;
  signingKeyHex: string;
  adminId: string;
  /** A user with no role at all. */
  plainUserId: string;
}

export class Tokens {
  private readonly key: KeyObject;
  private readonly otherKey = generateKeyPairSync('ed25519').privateKey;

  constructor(private readonly mint: TokenMint) {
    this.key = privateKeyFromHex(mint.signingKeyHex);
  }

  private claims(sub: string, scopes: string[], groups: string[], overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const now = Math.floor(Date.now() / 1000);
    return { iss: TOKEN_ISSUER, sub, groups, scopes, iat: now, exp: now + 600, jti: randomUUID(), ...overrides };
  }

  private signed(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject = this.key): string {
    const input = `${b64url(header)}.${b64url(payload)}`;
    return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
  }

  /** The Authorization header value of a kind, or undefined for none. */
  header(kind: TokenKind): string | undefined {
    const { kid, adminId, plainUserId } = this.mint;
    const admin = () => this.claims(adminId, ['iam:admin'], ['superadmin']);
    const edHeader = { alg: 'EdDSA', kid, typ: 'JWT' };
    switch (kind) {
      case 'absent':
        return undefined;
      case 'admin':
        return `Bearer ${this.signed(edHeader, admin())}`;
      case 'unscoped':
        return `Bearer ${this.signed(edHeader, this.claims(plainUserId, [], []))}`;
      case 'alg-none':
        return `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(admin())}.`;
      case 'hs256-public-key': {
        const input = `${b64url({ alg: 'HS256', kid, typ: 'JWT' })}.${b64url(admin())}`;
        return `Bearer ${input}.${createHmac('sha256', Buffer.from(this.mint.publicX, 'base64url')).update(input).digest('base64url')}`;
      }
      case 'wrong-kid':
        return `Bearer ${this.signed({ ...edHeader, kid: 'not-the-kid' }, admin())}`;
      case 'expired':
        return `Bearer ${this.signed(edHeader, { ...admin(), iat: 1_000_000, exp: 1_000_600 })}`;
      case 'bad-signature':
        return `Bearer ${this.signed(edHeader, admin(), this.otherKey)}`;
      case 'unknown-user':
        return `Bearer ${this.signed(edHeader, this.claims(randomUUID(), ['iam:admin'], ['superadmin']))}`;
      case 'garbage':
        return 'Bearer a.b.c';
    }
  }
}
