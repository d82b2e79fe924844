// Minting and verifying EdDSA JWTs (jose): claims exactly as the spec, every failure a 401.
import { randomUUID } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { Clock } from '../kernel/clock.js';
import { Deadlines, type Deadline } from '../kernel/deadlines.js';
import { UnauthenticatedError } from '../kernel/errors.js';
import { deepFreeze } from '../kernel/json.js';
import type { SigningKeys } from './keys.js';

export const TOKEN_ISSUER = 'svc';
const ALLOWED_HEADER_KEYS = new Set(['alg', 'kid', 'typ']);
/** Tolerated clock difference for `iat` in the future and `exp` in the past. */
const CLOCK_SKEW_SECONDS = 5;

export const TOKEN_EXPIRED_MESSAGE = 'Invalid token: expired';
/** Verified tokens remembered (by their whole text), the oldest forgotten first. */
const VERIFIED_LIMIT = 1000;

export interface TokenClaims {
  iss: string;
  sub: string;
  groups: string[];
  scopes: string[];
  tenant?: string;
  /** Seconds since the epoch, with millisecond precision. */
  iat: number;
  exp?: number;
  jti: string;
}

export interface MintRequest {
  userId: string;
  groups: string[];
  scopes: string[];
  tenant?: string | null;
  /** `iat` in ms (default: now); sign-in flows pass the moment before they read the account. */
  issuedAtMs?: number;
}

export interface MintedToken {
  token: string;
  claims: TokenClaims;
  /** Seconds until expiry; 0 when the token has no `exp`. */
  expiresIn: number;
}

export class TokenService {
  private readonly expiries: Deadlines<Deadline>;
  /**
   * Tokens whose signature and claims verified, by their exact text, with the key that verified them:
   * a client opening stream after stream (or page after page) with one token costs one Ed25519
   * verification, not one each (Envoy's jwt_authn keeps such a cache too). Only byte-identical
   * tokens match. Expiry is the one check whose answer changes with time: it is made on every use.
   */
  private readonly verified = new Map<string, { kid: string; claims: Readonly<TokenClaims> }>();

  constructor(
    private readonly keys: SigningKeys,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {
    this.expiries = new Deadlines(clock);
  }

  async mint(request: MintRequest): Promise<MintedToken> {
    const nowMs = request.issuedAtMs ?? this.clock.now().getTime();
    const claims: TokenClaims = {
      iss: TOKEN_ISSUER,
      sub: request.userId,
      groups: request.groups,
      scopes: request.scopes,
      ...(request.tenant ? { tenant: request.tenant } : {}),
      iat: nowMs / 1000,
      ...(this.ttlSeconds > 0 ? { exp: Math.floor(nowMs / 1000) + this.ttlSeconds } : {}),
      jti: randomUUID(),
    };
    const token = await new SignJWT(claims as unknown as JWTPayload)
      .setProtectedHeader({ alg: 'EdDSA', kid: this.keys.kid, typ: 'JWT' })
      .sign(this.keys.privateKey);
    return { token, claims, expiresIn: this.ttlSeconds };
  }

  /** Signature, algorithm, header, issuer and time claims; shape checks of groups/scopes come later. */
  async verify(token: string): Promise<Readonly<TokenClaims>> {
    const known = this.verified.get(token);
    if (known && known.kid === this.keys.kid) {
      // jose's own rule: expired once exp <= now (whole seconds) - tolerance.
      const { exp } = known.claims;
      if (exp !== undefined && exp <= Math.floor(this.clock.now().getTime() / 1000) - CLOCK_SKEW_SECONDS) throw new UnauthenticatedError(TOKEN_EXPIRED_MESSAGE);
      return known.claims;
    }
    const claims = await this.verifyFully(token);
    if (this.verified.size >= VERIFIED_LIMIT) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { kid: this.keys.kid, claims });
    return claims;
  }

  private async verifyFully(token: string): Promise<Readonly<TokenClaims>> {
    let payload: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      const unexpected = Object.keys(header).filter((key) => !ALLOWED_HEADER_KEYS.has(key));
      if (unexpected.length > 0) throw new UnauthenticatedError(`Token header may not carry ${unexpected.join(', ')}`);
      if (header.kid !== undefined && header.kid !== this.keys.kid) throw new UnauthenticatedError('Token was signed by an unknown key');
      ({ payload } = await jwtVerify(token, this.keys.publicKey, {
        algorithms: ['EdDSA'],
        issuer: TOKEN_ISSUER,
        requiredClaims: ['iss', 'sub', 'iat', 'jti', ...(this.ttlSeconds > 0 ? ['exp'] : [])],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: this.clock.now(),
      }));
    } catch (error) {
      if (error instanceof UnauthenticatedError) throw error;
      if ((error as { code?: string })?.code === 'ERR_JWT_EXPIRED') throw new UnauthenticatedError(TOKEN_EXPIRED_MESSAGE);
      throw new UnauthenticatedError(`Invalid token: ${describeJoseError(error)}`);
    }
    const nowSeconds = this.clock.now().getTime() / 1000;
    if (typeof payload.iat !== 'number' || payload.iat > nowSeconds + CLOCK_SKEW_SECONDS) {
      throw new UnauthenticatedError('Invalid token: issued in the future');
    }
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || typeof payload.jti !== 'string') {
      throw new UnauthenticatedError('Invalid token: missing subject or token id');
    }
    // Shared by every request that presents the token: nobody may change it.
    return deepFreeze(payload) as unknown as Readonly<TokenClaims>;
  }

  /**
   * Calls `watch.due()` once a token with this `exp` (seconds) is refused as expired, the tolerated
   * skew included: within a second after that, never from inside this call. One timer serves all.
   */
  watchExpiry(exp: number, watch: Deadline): void {
    this.expiries.add(watch, (exp + CLOCK_SKEW_SECONDS) * 1000);
  }

  forgetExpiry(watch: Deadline): void {
    this.expiries.delete(watch);
  }
}

function describeJoseError(error: unknown): string {
  const code = (error as { code?: string })?.code;
  switch (code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'algorithm not allowed';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad signature';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      return (error as Error).message;
    default:
      return 'malformed';
  }
}
