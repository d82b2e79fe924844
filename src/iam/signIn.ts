// Sign-in flows: bootstrap, password login, refresh and logout, each minting or revoking tokens.
import type { Pool } from '../db/pool.js';
import type { Clock } from '../kernel/clock.js';
import { BadRequestError, NotFoundError, UnauthenticatedError } from '../kernel/errors.js';
import type { IamCommands } from './handlers.js';
import { checkPasswordPolicy, hashPassword, isOversizePassword, verifyPassword } from './passwords.js';
import { findCredentials, findLoginCandidate, findUser, grantsOf } from './queries.js';
import { TOKEN_REVOKED_MESSAGE } from './authenticator.js';
import type { Principal } from '../kernel/access.js';
import { actorOf } from '../kernel/causation.js';
import type { MintedToken, TokenService } from './tokens.js';
import { checkEmail } from './rules.js';
import type { LoginThrottle } from './loginThrottle.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
}

export const LOGIN_FAILED_MESSAGE = 'Incorrect username or password';

export function tokenResponse(minted: MintedToken): TokenResponse {
  return { access_token: minted.token, token_type: 'bearer', expires_in: minted.expiresIn };
}

export class AuthService {
  constructor(
    private readonly pool: Pool,
    private readonly commands: IamCommands,
    private readonly tokens: TokenService,
    private readonly tenantIds: readonly string[] | undefined,
    private readonly clock: Clock,
    private readonly throttle: LoginThrottle,
  ) {}

  async bootstrap(email: string, password: string, tenant?: string): Promise<{ userId: string; minted: MintedToken }> {
    checkEmail(email);
    checkPasswordPolicy(password);
    const chosenTenant = this.tenantFor(tenant);
    const { userId } = await this.commands.bootstrap({ email, passwordHash: await hashPassword(password), tenant: chosenTenant });
    return { userId, minted: await this.mintFor(userId) };
  }

  /**
   * Every failure (unknown, inactive, passwordless, wrong password) is the same 401 after the same
   * work; too many of them for the account or from `address` (the client's) a 429, whatever the password.
   */
  async login(username: string, password: string, address: string): Promise<MintedToken> {
    const issuedAtMs = this.clock.now().getTime();
    const forgive = await this.throttle.attempt(username, address);
    const minted = await this.checkPassword(username, password, issuedAtMs);
    await forgive();
    return minted;
  }

  private async checkPassword(username: string, password: string, issuedAtMs: number): Promise<MintedToken> {
    // bcrypt sees only 72 bytes, so without this a padded password would match; the length says nothing about the account.
    if (isOversizePassword(password)) throw new UnauthenticatedError(LOGIN_FAILED_MESSAGE);
    const personal = this.commands.personal;
    const candidate = await findLoginCandidate(this.pool, { email: await personal.emailIndex(username), phone: await personal.phoneIndex(username) });
    const usable = candidate?.is_active ? candidate.hashed_password : null;
    const matches = await verifyPassword(password, usable);
    if (!candidate || !matches) throw new UnauthenticatedError(LOGIN_FAILED_MESSAGE);
    // bcrypt took a while: a password change or deactivation committed meanwhile wins over this login.
    const current = await findCredentials(this.pool, candidate.id);
    if (!current?.is_active || current.hashed_password !== candidate.hashed_password) throw new UnauthenticatedError(LOGIN_FAILED_MESSAGE);
    return this.mintFor(candidate.id, issuedAtMs);
  }

  /** Exchanges a token for a new one, once: of concurrent refreshes of one token, one succeeds. */
  async refresh(principal: Principal): Promise<MintedToken> {
    const issuedAtMs = this.clock.now().getTime();
    const { jti } = this.requireToken(principal);
    const user = await findUser(this.pool, principal.userId);
    if (!user?.is_active) throw new UnauthenticatedError('Account is not active');
    const revoked = await this.commands.revokeToken(jti, principal.userId, expiryOf(principal), { actor: actorOf(principal) });
    if (!revoked) throw new UnauthenticatedError(TOKEN_REVOKED_MESSAGE);
    return this.mintFor(user.id, issuedAtMs);
  }

  async logout(principal: Principal): Promise<void> {
    const { jti } = this.requireToken(principal);
    await this.commands.revokeToken(jti, principal.userId, expiryOf(principal), { actor: actorOf(principal) });
  }

  /**
   * Roles and scopes are read now and snapshotted into the token; an unknown user is a 404, an
   * inactive one a 401. The token's `iat` is a moment before the account was read (by default now,
   * before reading it), so a session end decided after that read refuses the token: a sign-in racing
   * a deactivation, password change or role removal never outlives it.
   */
  async mintFor(userId: string, issuedAtMs = this.clock.now().getTime()): Promise<MintedToken> {
    const user = await findUser(this.pool, userId);
    if (!user) throw new NotFoundError(`User ${userId} not found`);
    if (!user.is_active) throw new UnauthenticatedError('Account is not active');
    const grants = await grantsOf(this.pool, userId);
    return this.tokens.mint({ userId, groups: grants.groups, scopes: grants.scopes, tenant: user.tenant, issuedAtMs });
  }

  /** In a multi-tenant deployment a user belongs to one of SVC_TENANT_IDS (the first by default). */
  tenantFor(requested: string | null | undefined, fallback?: string | null): string | null {
    if (!this.tenantIds) {
      if (requested) throw new BadRequestError('tenant is only accepted when SVC_TENANT_IDS is set');
      return null;
    }
    const tenant = requested ?? fallback ?? this.tenantIds[0]!;
    if (!this.tenantIds.includes(tenant)) throw new BadRequestError(`tenant ${tenant} is not one of SVC_TENANT_IDS`);
    return tenant;
  }

  private requireToken(principal: Principal): { jti: string } {
    if (principal.isDev || !principal.jti) throw new BadRequestError('The dev key is not a token: nothing to refresh or revoke');
    return { jti: principal.jti };
  }
}

function expiryOf(principal: Principal): string | null {
  return principal.exp !== undefined ? new Date(principal.exp * 1000).toISOString() : null;
}
