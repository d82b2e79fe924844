// SvcAuth: password login, the OAuth start URL, identity, refresh and logout.
import type { Identity, SignInProvider, TokenResponse } from '../contract/types.js';
import { HttpCore } from './http.js';

export interface SvcAuthOptions {
  baseUrl: string;
  token?: string;
}

export class SvcAuth {
  private readonly http: HttpCore;

  constructor(options: SvcAuthOptions) {
    this.http = new HttpCore(options.baseUrl, options.token);
  }

  get token(): string | undefined {
    return this.http.token;
  }

  /** POST /auth/token (username is an email or a phone number); keeps the token. */
  async loginWithPassword(username: string, password: string): Promise<TokenResponse> {
    const response = await this.http.json<TokenResponse>('/auth/token', { method: 'POST', form: { username, password, grant_type: 'password' } });
    this.http.token = response.access_token;
    return response;
  }

  /** Where to send the browser to sign in with a federation provider. */
  getOAuthLoginUrl(provider: string): string {
    return `${this.http.baseUrl}/auth/oauth/${encodeURIComponent(provider)}/start`;
  }

  /** The providers a user can sign in with now (`GET /auth/providers`, no token needed). */
  listProviders(): Promise<SignInProvider[]> {
    return this.http.json<SignInProvider[]>('/auth/providers', { token: '' });
  }

  getMe(token?: string): Promise<Identity> {
    return this.http.json<Identity>('/auth/me', { token });
  }

  /** Revokes the current token and keeps the new one (with the user's current roles). */
  async refresh(token?: string): Promise<TokenResponse> {
    const response = await this.http.json<TokenResponse>('/auth/refresh', { method: 'POST', token });
    this.http.token = response.access_token;
    return response;
  }

  async logout(token?: string): Promise<void> {
    await this.http.json<void>('/auth/logout', { method: 'POST', token });
    if (token === undefined || token === this.http.token) this.http.token = undefined;
  }
}
