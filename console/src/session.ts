// The signed-in session: the token (kept in sessionStorage, so it ends with the tab), the identity
// GET /auth/me answers, and the client library bound to that token. Under /insight the token is the raw
// dev key, which the service maps to the synthetic dev identity (user dev, scope iam:admin).
import { SvcAuth, SvcClient, type Identity } from '../../src/client/index.js';
import { isInsight } from './mount.js';

/** Each mount keeps its own: a dev key taken under /insight never becomes /console's session. */
const tokenKey = (): string => (isInsight() ? 'svc-insight-key' : 'svc-console-token');

export interface Session {
  token: string;
  identity: Identity;
  client: SvcClient;
  auth: SvcAuth;
}

/** Where the service is: the page's own origin (the console is served by svc). */
export const baseUrl = (): string => window.location.origin;

export const storedToken = (): string | null => sessionStorage.getItem(tokenKey());

export function forgetToken(): void {
  sessionStorage.removeItem(tokenKey());
}

/**
 * The token an OAuth callback put in the URL (`SVC_OAUTH_UI_REDIRECT_URL` pointing here): kept, and
 * taken out of the address bar and history at once.
 */
export function takeTokenFromUrl(): void {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('token');
  if (!token) return;
  sessionStorage.setItem(tokenKey(), token);
  url.searchParams.delete('token');
  window.history.replaceState(null, '', url.toString());
}

/** A session for `token`, or an error when the service refuses it (expired, revoked, ended). */
export async function openSession(token: string): Promise<Session> {
  const auth = new SvcAuth({ baseUrl: baseUrl(), token });
  const identity = await auth.getMe();
  sessionStorage.setItem(tokenKey(), token);
  return { token, identity, auth, client: new SvcClient({ baseUrl: baseUrl(), token }) };
}

/** Ends the session: the token is revoked (POST /auth/logout) and forgotten; a dev key is only forgotten. */
export function signOut(session: Session): void {
  if (!isInsight()) void session.auth.logout().catch(() => undefined);
  forgetToken();
}

export async function signInWithPassword(username: string, password: string): Promise<Session> {
  const auth = new SvcAuth({ baseUrl: baseUrl() });
  const { access_token: token } = await auth.loginWithPassword(username, password);
  return openSession(token);
}

/** Whether the identity holds `scope` (`iam:admin` holds every scope, as the service decides). */
export function hasScope(identity: Identity, scope: string): boolean {
  return identity.scopes.includes(scope) || identity.scopes.includes('iam:admin');
}

/** What the console shows, from the token's scopes; the API refuses the rest anyway. */
export function abilities(identity: Identity) {
  return {
    readRuns: hasScope(identity, 'runs:read'),
    controlRuns: hasScope(identity, 'runs:control'),
    decideApprovals: hasScope(identity, 'approvals:decide'),
  };
}
export type Abilities = ReturnType<typeof abilities>;

/** A readable sentence from a failed call (SvcRequestError carries the service's `detail`). */
export function messageOf(error: unknown): string {
  const body = (error as { body?: unknown }).body as { detail?: unknown; message?: unknown } | undefined;
  if (body && typeof body.detail === 'string') return body.detail;
  if (body && Array.isArray(body.detail))
    return body.detail.map((issue: { loc?: unknown[]; msg?: string }) => [issue.loc?.slice(1).join('.'), issue.msg].filter(Boolean).join(': ')).join('; ');
  if (body && typeof body.message === 'string') return body.message;
  return error instanceof Error ? error.message : String(error);
}
