// Federated sign-in: start (state, PKCE, redirect) and callback (consume the state once, exchange,
// upsert the user by provider identity, journal the sign-in, mint a token).
import { randomBytes } from 'node:crypto';
import type { AuthService } from '../iam/signIn.js';
import type { Settings } from '../config/settings.js';
import type { Pool } from '../db/pool.js';
import type { IamCommands } from '../iam/handlers.js';
import { findRoleByName, findUserByEmail, findUserByFederatedIdentity } from '../iam/queries.js';
import { AlreadyExistsError, AppError, BadRequestError, NotFoundError } from '../kernel/errors.js';
import { actorOfUserId } from '../kernel/causation.js';
import type { MintedToken } from '../iam/tokens.js';
import type { OutboundFetch } from '../outbound/fetch.js';
import { decideFederatedLogin } from './decide.js';
import { authorizationUrl, completeLogin, newLoginSecrets } from './oauth.js';
import { bindingMatches, consumeState, saveState } from './oauthState.js';
import type { Provider } from './providerDocument.js';
import type { FederationProviders } from './registry.js';

export class FederationService {
  constructor(
    private readonly pool: Pool,
    private readonly commands: IamCommands,
    private readonly auth: AuthService,
    private readonly providers: FederationProviders,
    private readonly settings: Settings,
    /** The token, key set and profile requests of a login go through it (the destination policy). */
    private readonly fetch: OutboundFetch,
  ) {}

  redirectUri(name: string): string {
    const base = this.settings.oauth.baseUrl ?? `http://${this.settings.host}:${this.settings.port}`;
    return `${base.replace(/\/+$/, '')}/auth/oauth/${encodeURIComponent(name)}/callback`;
  }

  /** The path the browser sees for this provider's routes: behind a path-prefix proxy, the prefix included. */
  cookiePath(name: string): string {
    return new URL(this.redirectUri(name)).pathname.replace(/\/callback$/, '');
  }

  private usable(name: string): Provider {
    const provider = this.providers.get(name);
    if (!provider || !provider.enabled) throw new NotFoundError(`No federation provider ${name}`);
    if (!provider.clientId || !provider.clientSecret) throw new AppError('NOT_IMPLEMENTED', `Provider ${name} has no client credentials configured`);
    return provider;
  }

  /** Stores a one-time state and answers where to send the browser, and the cookie that binds it. */
  async start(name: string): Promise<{ location: string; binding: string }> {
    const provider = this.usable(name);
    const secrets = await newLoginSecrets();
    const binding = randomBytes(24).toString('base64url');
    await saveState(this.pool, secrets.state, { provider: name, codeVerifier: secrets.codeVerifier, nonce: secrets.nonce, binding });
    return { location: authorizationUrl(provider, this.redirectUri(name), secrets).toString(), binding };
  }

  async callback(name: string, query: URLSearchParams, bindingCookie: string | undefined): Promise<MintedToken> {
    const provider = this.usable(name);
    const state = query.get('state');
    if (!state) throw new BadRequestError('The callback has no state');
    const pending = await consumeState(this.pool, state);
    if (!pending || pending.provider !== name) throw new BadRequestError('Unknown or already used login state');
    if (pending.expired) throw new BadRequestError('The login took too long; start again');
    if (!bindingMatches(pending, bindingCookie)) throw new BadRequestError('This login was started in another browser');
    const profile = await completeLogin(
      provider,
      this.redirectUri(name),
      query,
      { state, codeVerifier: pending.codeVerifier, nonce: pending.nonce },
      this.fetch,
    );
    const userId = await this.upsertUser(provider, profile);
    await this.commands.recordSignIn(userId, 'federated', name, { actor: actorOfUserId(userId) });
    return this.auth.mintFor(userId);
  }

  private async upsertUser(provider: Provider, profile: Awaited<ReturnType<typeof completeLogin>>, attempt = 0): Promise<string> {
    const personal = this.commands.personal;
    const byIdentity = await findUserByFederatedIdentity(this.pool, await personal.federatedIndex(provider.name, profile.subject));
    const byEmail = byIdentity || !profile.email ? undefined : await findUserByEmail(this.pool, await personal.emailIndex(profile.email));
    const decision = decideFederatedLogin(provider.allowedDomains, profile, byIdentity, byEmail);
    if (decision.action === 'login') return decision.userId;
    // The sign-in request has no principal yet: the provider vouched for this identity.
    const metadata = { actor: { type: 'system', id: `federation:${provider.name}` } };
    if (decision.action === 'link') {
      await this.commands.linkFederation(decision.userId, provider.name, profile.subject, metadata);
      return decision.userId;
    }
    try {
      const userId = await this.commands.createUser(
        { email: decision.email, passwordHash: null, federatedProvider: provider.name, federatedSub: profile.subject, tenant: this.auth.tenantFor(undefined) },
        metadata,
      );
      const role = provider.defaultRole ? await findRoleByName(this.pool, provider.defaultRole) : undefined;
      if (role) await this.commands.assignRole(userId, role.id, metadata);
      return userId;
    } catch (error) {
      // Two first logins of one identity at once: the loser finds the winner's account.
      if (error instanceof AlreadyExistsError && attempt === 0) return this.upsertUser(provider, profile, 1);
      throw error;
    }
  }
}
