// The OAuth 2.0 / OpenID Connect exchange, with oauth4webapi: authorization code + PKCE (S256),
// state, and for OIDC providers the ID token's nonce, audience, issuer and signature.
import { createRemoteJWKSet, customFetch, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import * as oauth from 'oauth4webapi';
import { AppError, BadRequestError } from '../kernel/errors.js';
import { outboundRefusalIn, type OutboundFetch } from '../outbound/fetch.js';
import { isLoopbackHost } from '../outbound/policy.js';
import type { Provider } from './providerDocument.js';

export interface FederatedProfile {
  /** Stable per provider: OIDC `sub`, GitHub's numeric id, Microsoft's `<tid>:<oid>`. */
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export interface LoginSecrets {
  state: string;
  codeVerifier: string;
  nonce: string;
}

const isOidc = (provider: Provider) => provider.issuer !== undefined && provider.scope.split(/\s+/).includes('openid');

/**
 * Plain http only when every endpoint is on loopback (a local test provider): one loopback URL must not
 * let the others go out in the clear. Providers are checked for this when saved or loaded, and again here.
 */
function insecureAllowed(provider: Provider): boolean {
  const endpoints = [provider.authUrl, provider.tokenUrl, provider.userinfoUrl, provider.emailsUrl, provider.jwksUrl].filter((u) => u !== undefined);
  return endpoints.every((value) => URL.canParse(value) && isLoopbackHost(new URL(value).hostname));
}

function authorizationServer(provider: Provider, issuer?: string): oauth.AuthorizationServer {
  return {
    issuer: issuer ?? provider.issuer ?? new URL(provider.authUrl).origin,
    authorization_endpoint: provider.authUrl,
    token_endpoint: provider.tokenUrl,
    ...(provider.userinfoUrl ? { userinfo_endpoint: provider.userinfoUrl } : {}),
    ...(provider.jwksUrl ? { jwks_uri: provider.jwksUrl } : {}),
  };
}

export async function newLoginSecrets(): Promise<LoginSecrets & { codeChallenge: string }> {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  return {
    state: oauth.generateRandomState(),
    codeVerifier,
    nonce: oauth.generateRandomNonce(),
    codeChallenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
  };
}

export function authorizationUrl(provider: Provider, redirectUri: string, secrets: { state: string; nonce: string; codeChallenge: string }): URL {
  const url = new URL(provider.authUrl);
  url.searchParams.set('client_id', provider.clientId!);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('scope', provider.scope);
  url.searchParams.set('state', secrets.state);
  url.searchParams.set('code_challenge', secrets.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  if (isOidc(provider)) url.searchParams.set('nonce', secrets.nonce);
  return url;
}

/**
 * Exchanges the code and reads who signed in, every request through `fetch` (the destination policy).
 * Protocol failures are 400s; a provider that cannot be reached, or may not be, is a 503.
 */
export async function completeLogin(
  provider: Provider,
  redirectUri: string,
  callback: URLSearchParams,
  secrets: LoginSecrets,
  fetch: OutboundFetch,
): Promise<FederatedProfile> {
  const client: oauth.Client = { client_id: provider.clientId! };
  const auth = oauth.ClientSecretPost(provider.clientSecret!);
  const options = { [oauth.allowInsecureRequests]: insecureAllowed(provider), [oauth.customFetch]: fetch };
  try {
    const params = oauth.validateAuthResponse(authorizationServer(provider), client, callback, secrets.state);
    const response = await oauth.authorizationCodeGrantRequest(authorizationServer(provider), client, auth, params, redirectUri, secrets.codeVerifier, options);
    if (!isOidc(provider)) {
      const result = await oauth.processAuthorizationCodeResponse(authorizationServer(provider), client, response, { requireIdToken: false });
      const profile = { provider, accessToken: result.access_token, fetch };
      return provider.kind === 'github' ? await githubProfile(profile) : await userinfoProfile(profile);
    }
    // Multi-tenant Microsoft issuers name the user's tenant: read it before the checks.
    const body = (await response.clone().json()) as { id_token?: string };
    const issuer =
      provider.issuer!.includes('{tenantid}') && body.id_token
        ? provider.issuer!.replace('{tenantid}', String(decodeJwt(body.id_token).tid ?? ''))
        : provider.issuer!;
    const as = authorizationServer(provider, issuer);
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: secrets.nonce, requireIdToken: true });
    const claims = await verifiedIdToken(provider, result.id_token!, issuer, fetch);
    return oidcProfile(provider, claims);
  } catch (error) {
    const refusal = outboundRefusalIn(error);
    if (refusal) throw new AppError('UNAVAILABLE', `The provider ${provider.name} could not be reached: ${refusal.message}`);
    if (error instanceof AppError) throw error;
    if (error instanceof oauth.AuthorizationResponseError) throw new BadRequestError(`The provider refused the login: ${error.error}`);
    if (error instanceof oauth.ResponseBodyError) throw new BadRequestError(`The provider refused the code: ${error.error}`);
    // Not the browser's fault: the provider could not be reached or did not answer in time.
    if (isUnreachable(error)) throw new AppError('UNAVAILABLE', `The provider ${provider.name} could not be reached: ${(error as Error).message}`);
    throw new BadRequestError(`The login could not be completed: ${(error as Error).message}`);
  }
}

/** fetch's network failures (a TypeError with a cause) and timeouts. */
function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'TimeoutError' || error.name === 'AbortError' || (error instanceof TypeError && error.cause !== undefined);
}

/** oauth4webapi checked iss, aud, nonce and times; the signature is checked here against the key set. */
async function verifiedIdToken(provider: Provider, idToken: string, issuer: string, fetch: OutboundFetch): Promise<JWTPayload> {
  if (!provider.jwksUrl) throw new AppError('INTERNAL', `Provider ${provider.name} has an issuer but no jwks_url`);
  const keys = createRemoteJWKSet(new URL(provider.jwksUrl), { [customFetch]: fetch });
  const { payload } = await jwtVerify(idToken, keys, { issuer, audience: provider.clientId! });
  return payload;
}

function oidcProfile(provider: Provider, claims: JWTPayload): FederatedProfile {
  const email =
    typeof claims.email === 'string'
      ? claims.email
      : provider.kind === 'microsoft' && typeof claims.preferred_username === 'string'
        ? claims.preferred_username
        : null;
  const subject = provider.kind === 'microsoft' ? `${String(claims.tid ?? '')}:${String(claims.oid ?? claims.sub)}` : String(claims.sub);
  // Microsoft sends no email_verified; its optional xms_edov claim says the email's domain owner verified it.
  const emailVerified = claims.email_verified === true || (provider.kind === 'microsoft' && (claims.xms_edov === true || claims.xms_edov === 1));
  return { subject, email, emailVerified };
}

interface ProfileRequest {
  provider: Provider;
  accessToken: string;
  fetch: OutboundFetch;
}

/** The access token goes only over https (or to a provider wholly on loopback), and never on to a redirect's target. */
async function getJson({ provider, accessToken, fetch }: ProfileRequest, url: string): Promise<unknown> {
  if (new URL(url).protocol !== 'https:' && !insecureAllowed(provider)) throw new AppError('INTERNAL', `Provider ${provider.name}: ${url} is not https`);
  const response = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json, application/json', 'user-agent': 'svc' },
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw new AppError('INTERNAL', `The provider answered ${response.status} for the profile`);
  return response.json();
}

/** GitHub: keyed by the numeric id; only addresses its email list marks verified count. */
async function githubProfile(request: ProfileRequest): Promise<FederatedProfile> {
  const { provider } = request;
  const user = (await getJson(request, provider.userinfoUrl!)) as { id?: number };
  if (typeof user.id !== 'number') throw new BadRequestError('The GitHub profile has no numeric id');
  const emails = provider.emailsUrl ? ((await getJson(request, provider.emailsUrl)) as { email: string; verified: boolean; primary: boolean }[]) : [];
  const verified = emails.filter((e) => e.verified === true);
  const chosen = verified.find((e) => e.primary) ?? verified[0];
  return { subject: String(user.id), email: chosen?.email ?? null, emailVerified: chosen !== undefined };
}

async function userinfoProfile(request: ProfileRequest): Promise<FederatedProfile> {
  const { provider } = request;
  if (!provider.userinfoUrl) throw new BadRequestError(`Provider ${provider.name} has no userinfo_url`);
  const info = (await getJson(request, provider.userinfoUrl)) as { sub?: string; id?: string | number; email?: string; email_verified?: boolean };
  const subject = info.sub ?? (info.id !== undefined ? String(info.id) : undefined);
  if (!subject) throw new BadRequestError('The profile has no subject');
  return { subject, email: info.email ?? null, emailVerified: info.email_verified === true };
}
