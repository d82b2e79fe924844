// /auth/providers (the sign-in choices), /auth/oauth/{provider}/start|callback, and /auth/admin/federation (deployment admins) with secrets redacted.
import { Router } from 'express';
import { parse as parseCookies } from 'cookie';
import type { Authenticator } from '../http/authenticator.js';
import { answerToken } from '../iam/answerToken.js';
import type { Settings } from '../config/settings.js';
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import { requestMetadata } from '../http/context.js';
import type { Clock } from '../kernel/clock.js';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import type { Outbound } from '../outbound/fetch.js';
import { STATE_TTL_SECONDS } from './oauthState.js';
import { documentOf, endpointsOf, redacted, resolveProvider } from './providers.js';
import { providerDocumentSchema, REDACTED, type ProviderSpec } from './providerDocument.js';
import { federationStream, type FederationProviders } from './registry.js';
import type { FederationService } from './service.js';

/** Behind https the name carries the `__Secure-` prefix, so no plain-http page can plant or replace it (ASVS 3.3.1). */
const cookieName = (isSecure: boolean) => (isSecure ? '__Secure-svc_oauth_binding' : 'svc_oauth_binding');
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

interface FederationRouteDeps {
  federation: FederationService;
  providers: FederationProviders;
  store: EventStore;
  authenticator: Authenticator;
  settings: Settings;
  clock: Clock;
  outbound: Outbound;
}

export function federationRouter(deps: FederationRouteDeps): Router {
  const router = Router();
  mountSignInRoutes(router, deps);
  mountProviderAdminRoutes(router, deps);
  return router;
}

function mountSignInRoutes(router: Router, { federation, settings, providers }: FederationRouteDeps): void {
  const secure = (settings.oauth.baseUrl ?? '').startsWith('https:');
  // Public: a sign-in page offers these buttons. Names and kinds only; a provider without credentials cannot start.
  router.get('/auth/providers', (_req, res) => {
    const usable = providers.list().filter((p) => p.enabled && p.clientId && p.clientSecret);
    res.json(usable.map((p) => ({ name: p.name, kind: p.kind, start_url: `/auth/oauth/${p.name}/start` })));
  });
  router.get('/auth/oauth/:provider/start', async (req, res) => {
    const name = String(req.params.provider);
    const { location, binding } = await federation.start(name);
    res.cookie(cookieName(secure), binding, { httpOnly: true, sameSite: 'lax', secure, maxAge: STATE_TTL_SECONDS * 1000, path: federation.cookiePath(name) });
    res.redirect(302, location);
  });

  router.get('/auth/oauth/:provider/callback', async (req, res) => {
    const name = String(req.params.provider);
    const query = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1));
    const binding = parseCookies(req.headers.cookie ?? '')[cookieName(secure)];
    const minted = await federation.callback(name, query, binding);
    res.clearCookie(cookieName(secure), { path: federation.cookiePath(name) });
    res.setHeader('Cache-Control', 'no-store');
    if (settings.oauth.uiRedirectUrl) {
      // The token travels in the URL: no Referer may carry it further.
      res.setHeader('Referrer-Policy', 'no-referrer');
      const target = new URL(settings.oauth.uiRedirectUrl);
      target.searchParams.set('token', minted.token);
      res.redirect(302, target.toString());
      return;
    }
    answerToken(res, minted);
  });
}

function mountProviderAdminRoutes(router: Router, deps: FederationRouteDeps): void {
  const { providers, store, clock } = deps;
  const admin = deps.authenticator.requireDeploymentAdmin('federation providers sign users in to every tenant');
  router.get('/auth/admin/federation', admin, (_req, res) => {
    res.json(providers.list().map(redacted));
  });
  router.get('/auth/admin/federation/:name', admin, (req, res) => {
    const provider = providers.get(String(req.params.name));
    if (!provider) throw new NotFoundError(`No federation provider ${req.params.name}`);
    res.json(redacted(provider));
  });
  router.put('/auth/admin/federation/:name', admin, async (req, res) => {
    res.json(await saveProvider(deps, String(req.params.name), req.body, requestMetadata(req)));
  });
  router.delete('/auth/admin/federation/:name', admin, async (req, res) => {
    const name = String(req.params.name);
    if (!providers.isSaved(name)) {
      if (providers.get(name)) throw new ConflictError(`Provider ${name} comes from the project files; remove its file instead`);
      throw new NotFoundError(`No federation provider ${name}`);
    }
    const stream = federationStream(name);
    await runCommand(store, {
      streams: [stream],
      decide: () => ({ events: { [stream]: [{ type: 'FederationProviderDeleted', data: { name, at: clock.now().toISOString() } }] }, result: undefined }),
      metadata: requestMetadata(req),
    });
    res.status(204).end();
  });
}

/** Checks a provider document as boot would, plus the destination policy, and records it; answers it redacted. */
async function saveProvider(
  { providers, store, settings, clock, outbound }: FederationRouteDeps,
  name: string,
  input: unknown,
  metadata: EventMetadata,
): Promise<unknown> {
  if (!NAME.test(name)) throw new BadRequestError('A provider name is lower-case letters, digits, - and _');
  const body = providerDocumentSchema.parse(input ?? {});
  if (body.metadata?.name !== undefined && body.metadata.name !== name) throw new BadRequestError('metadata.name differs from the path');
  const document = documentOf(body as unknown as Record<string, unknown>, name);
  // A redacted secret sent back unchanged keeps the stored one.
  if (document.spec.client_secret === REDACTED) {
    const previous = providers.get(name)?.document.spec.client_secret;
    if (previous === undefined) throw new BadRequestError('client_secret is the redaction marker but no secret is stored');
    document.spec = { ...document.spec, client_secret: previous };
  }
  const resolved = resolveProvider(name, document, 'admin', settings);
  const refusals = await destinationRefusals(outbound, document.spec);
  if (resolved.problems.length + refusals.length > 0) throw new BadRequestError([...resolved.problems, ...refusals].join('; '));
  const stream = federationStream(name);
  await runCommand(store, {
    streams: [stream],
    decide: () => ({
      events: { [stream]: [{ type: 'FederationProviderSaved', data: { name, document: document as unknown as JsonObject, at: clock.now().toISOString() } }] },
      result: undefined,
    }),
    metadata,
  });
  // Skipped for unset variables, a name may still answer with the project's or the built-in provider.
  const saved = resolved.missing.length === 0 ? providers.get(name) : undefined;
  return saved ? redacted(saved) : { metadata: { name }, skipped: `variables not set: ${resolved.missing.join(', ')}` };
}

/**
 * The endpoints svc itself requests (not auth_url: only the browser goes there), checked against the
 * destination policy now, so a provider svc may not reach is refused when saved, not at its first login.
 */
async function destinationRefusals(outbound: Outbound, spec: ProviderSpec): Promise<string[]> {
  const fetched = Object.entries(endpointsOf(spec)).filter(([field]) => field !== 'auth_url');
  const refusals = await Promise.all(fetched.map(async ([field, url]) => [field, await outbound.refusalOf(url)] as const));
  return refusals.flatMap(([field, refusal]) => (refusal ? [`${field}: ${refusal}`] : []));
}
