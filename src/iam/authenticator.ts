// The verification pipeline of every protected REST request (steps 1-8), and access guards: IAM's Authenticator.
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Settings } from '../config/settings.js';
import { PermissionDeniedError, UnauthenticatedError } from '../kernel/errors.js';
import { NAME_PATTERN, SUPERADMIN_ROLE } from './rules.js';
import { ADMIN_SCOPE, isAllowed, type AccessRule, type Principal } from '../kernel/access.js';
import { DEV_USER_ID } from '../kernel/causation.js';
import type { Authenticator } from '../http/authenticator.js';
import type { SessionEnding, SessionView, SessionWatcher, WatchedToken } from './sessionView.js';
import { TOKEN_EXPIRED_MESSAGE, type TokenClaims, type TokenService } from './tokens.js';

export const SESSION_ENDED_MESSAGE = 'Session ended — sign in again.';
export const TOKEN_REVOKED_MESSAGE = 'Token has been revoked';

/**
 * Single-tenant deployments: every `iam:admin`. Multi-tenant (SVC_TENANT_IDS): `iam:admin` with the
 * `superadmin` group (the role bootstrap creates), or the dev key; `iam:admin` alone makes a tenant
 * admin, who administers its own tenant's users only.
 */
export function isDeploymentAdmin(principal: Principal, isMultiTenant: boolean): boolean {
  if (!principal.scopes.includes(ADMIN_SCOPE)) return false;
  return !isMultiTenant || principal.isDev || principal.groups.includes(SUPERADMIN_ROLE);
}

export interface AuthenticatorDeps {
  tokens: TokenService;
  sessions: SessionView;
  settings: Settings;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  return new TokenAuthenticator(deps);
}

/** Bearer tokens checked offline, then against this process's view of revocations and session ends. */
class TokenAuthenticator implements Authenticator {
  private readonly devKey: string | undefined;

  constructor(private readonly deps: AuthenticatorDeps) {
    const { dev } = deps.settings;
    this.devKey = dev.enabled && dev.allowDevAuth ? dev.apiKey : undefined;
  }

  readonly authenticate: RequestHandler = async (req, _res, next) => {
    await this.principalOf(req);
    next();
  };

  require(rule: AccessRule = {}): RequestHandler {
    return async (req, _res, next) => {
      const principal = await this.principalOf(req);
      if (!isAllowed(principal, rule)) throw new PermissionDeniedError(describeMissing(rule));
      next();
    };
  }

  async principalOf(req: Request): Promise<Principal> {
    req.principal ??= await this.principalOfToken(bearerToken(req), req.socket.remoteAddress);
    return req.principal;
  }

  async principalOfToken(token: string | undefined, remoteAddress: string | undefined): Promise<Principal> {
    if (!token) throw new UnauthenticatedError('Not authenticated');
    const { settings, tokens, sessions } = this.deps;
    if (this.devKey !== undefined && isDevKey(token, this.devKey) && isAllowedIp(remoteAddress, settings.dev.ipAllowlist)) {
      return { userId: DEV_USER_ID, groups: ['dev'], scopes: ['iam:admin'], isDev: true };
    }
    const claims = await tokens.verify(token);
    if (sessions.isRevoked(claims.jti)) throw new UnauthenticatedError(TOKEN_REVOKED_MESSAGE);
    const sessionEnd = sessions.sessionEndOf(claims.sub);
    if (sessionEnd !== undefined && Math.round(claims.iat * 1000) < sessionEnd) throw new UnauthenticatedError(SESSION_ENDED_MESSAGE);
    checkClaimShapes(claims, settings.tenantIds);
    return {
      userId: claims.sub,
      groups: claims.groups,
      scopes: claims.scopes,
      ...(claims.tenant !== undefined ? { tenant: claims.tenant } : {}),
      jti: claims.jti,
      iat: claims.iat,
      ...(claims.exp !== undefined ? { exp: claims.exp } : {}),
      isDev: false,
    };
  }

  watch(principal: Principal, onEnd: (reason: string) => void): () => void {
    const { jti, iat, exp } = principal;
    if (principal.isDev || jti === undefined || iat === undefined) return () => undefined;
    const watch = new CredentialsWatch({ jti, userId: principal.userId, issuedAtMs: Math.round(iat * 1000) }, onEnd, this.deps);
    this.deps.sessions.watch(watch);
    if (exp !== undefined) this.deps.tokens.watchExpiry(exp, watch);
    return () => watch.cancel();
  }

  isDeploymentAdmin(principal: Principal): boolean {
    return isDeploymentAdmin(principal, this.deps.settings.tenantIds !== undefined);
  }

  requireDeploymentAdmin(why: string, rule: AccessRule = { scope: ADMIN_SCOPE }): RequestHandler {
    return async (req, _res, next) => {
      const principal = await this.principalOf(req);
      if (!isAllowed(principal, rule)) throw new PermissionDeniedError(describeMissing(rule));
      if (this.deps.settings.tenantIds !== undefined && !principal.isDev && !principal.groups.includes(SUPERADMIN_ROLE)) {
        throw new PermissionDeniedError(
          `Permission denied: ${why}; this is for deployment admins (${ADMIN_SCOPE} and the ${SUPERADMIN_ROLE} group), not for the admin of tenant ${principal.tenant ?? '(none)'}`,
        );
      }
      next();
    };
  }
}

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function isDevKey(candidate: string, devKey: string): boolean {
  const a = Buffer.from(candidate);
  const b = Buffer.from(devKey);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isAllowedIp(remoteAddress: string | undefined, allowlist: readonly string[]): boolean {
  return allowlist.includes((remoteAddress ?? '').replace(/^::ffff:/, ''));
}

/** Step 6: claims a library does not check. */
function checkClaimShapes(claims: TokenClaims, tenantIds: readonly string[] | undefined): void {
  const isNameList = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string' && NAME_PATTERN.test(v));
  if (!isNameList(claims.groups) || !isNameList(claims.scopes)) throw new UnauthenticatedError('Invalid token: malformed groups or scopes');
  if (claims.tenant !== undefined && typeof claims.tenant !== 'string') throw new UnauthenticatedError('Invalid token: malformed tenant');
  if (tenantIds && (claims.tenant === undefined || !tenantIds.includes(claims.tenant))) {
    throw new UnauthenticatedError('Invalid token: tenant not allowed');
  }
}

function describeMissing(rule: AccessRule): string {
  const parts = [rule.scope ? `scope ${rule.scope}` : undefined, rule.groups?.length ? `one of the groups ${rule.groups.join(', ')}` : undefined];
  return `Permission denied: requires ${parts.filter(Boolean).join(' and ') || 'access'}`;
}

/**
 * One open answer's watch on its credentials: told by the session view (revoked, sessions ended) or
 * by the expiry timer, it ends once. An object, not closures: thousands of idle streams hold one each.
 */
class CredentialsWatch implements SessionWatcher {
  readonly jti: string;
  readonly userId: string;
  readonly issuedAtMs: number;
  private isEnded = false;

  constructor(
    token: WatchedToken,
    private readonly onEnd: (reason: string) => void,
    private readonly deps: { sessions: SessionView; tokens: TokenService },
  ) {
    this.jti = token.jti;
    this.userId = token.userId;
    this.issuedAtMs = token.issuedAtMs;
  }

  sessionEnded(ending: SessionEnding): void {
    this.end(ending === 'revoked' ? TOKEN_REVOKED_MESSAGE : SESSION_ENDED_MESSAGE);
  }

  /** The token expired. */
  due(): void {
    this.end(TOKEN_EXPIRED_MESSAGE);
  }

  cancel(): void {
    this.isEnded = true;
    this.deps.sessions.unwatch(this);
    this.deps.tokens.forgetExpiry(this);
  }

  private end(reason: string): void {
    if (this.isEnded) return;
    this.cancel();
    this.onEnd(reason);
  }
}
