// Dev mode only: /dev/* (JSON, the dev key as bearer) and /insight (a page over the API). Both are
// absent (404) outside dev mode, refuse addresses outside SVC_DEV_IP_ALLOWLIST, and answer only under
// the service's own host names.
import { Router, type Request, type RequestHandler } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import type { AuthService } from '../iam/signIn.js';
import type { Settings } from '../config/settings.js';
import { answerToken } from '../iam/answerToken.js';
import { NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import { pageSecurityHeaders } from '../http/securityHeaders.js';
import { insightPage } from './insight.js';
import { INSIGHT_SCRIPT } from './insightScript.js';

const tokenBody = compileValidator<{ user_id: string }>({
  type: 'object',
  properties: { user_id: { type: 'string', format: 'uuid' } },
  required: ['user_id'],
  additionalProperties: false,
});

/** A connection URL with its password replaced, so the settings page never shows a credential. */
function maskPassword(url: string | undefined): string | undefined {
  if (!url) return url;
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/**
 * Whether the request names the service as its host: localhost or the address the connection came
 * in on (with its port), or SVC_OAUTH_BASE_URL's host. A DNS-rebinding page reaches the service under
 * its own name, which is none of these, so it never reads a page that embeds the dev key.
 */
function isOwnHost(req: Request, publicHost: string | undefined): boolean {
  const host = (req.headers.host ?? '').toLowerCase();
  if (publicHost !== undefined && host === publicHost) return true;
  const { localAddress, localPort } = req.socket;
  const address = (localAddress ?? '').replace(/^::ffff:/, '');
  const names = ['localhost', address.includes(':') ? `[${address}]` : address];
  return names.some((name) => host === `${name}:${localPort}` || (localPort === 80 && host === name));
}

export function devRouter(deps: { settings: Settings; authenticator: Authenticator; auth: AuthService }): Router {
  const { settings, authenticator, auth } = deps;
  const router = Router();
  const allowedIp = (req: Request) => settings.dev.ipAllowlist.includes((req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
  const requireDevKey = async (req: Request) => {
    if (!allowedIp(req)) throw new PermissionDeniedError('Dev routes answer only to SVC_DEV_IP_ALLOWLIST');
    const principal = await authenticator.principalOf(req);
    if (!principal.isDev) throw new UnauthenticatedError('Dev routes need the dev key as bearer token');
  };

  const publicHost = settings.oauth.baseUrl ? new URL(settings.oauth.baseUrl).host : undefined;
  router.use(['/dev', '/insight'], (req, _res, next) => {
    if (!settings.dev.enabled || !settings.dev.apiKey) throw new NotFoundError(`No route for ${req.method} ${req.path}`);
    if (!allowedIp(req)) throw new PermissionDeniedError('Dev routes answer only to SVC_DEV_IP_ALLOWLIST');
    if (!isOwnHost(req, publicHost))
      throw new PermissionDeniedError('Dev routes answer only under the service’s own host: its listen address, localhost or SVC_OAUTH_BASE_URL’s host');
    next();
  });

  router.get('/dev/settings', async (req, res) => {
    await requireDevKey(req);
    const { signingKeyHex: _key, dev, environment: _environment, oauth, ...visible } = settings;
    res.json({
      ...visible,
      databaseUrl: maskPassword(visible.databaseUrl),
      readDatabaseUrl: maskPassword(visible.readDatabaseUrl),
      redisUrl: maskPassword(visible.redisUrl),
      dev: { ...dev, apiKey: '[set]' },
      oauth: { baseUrl: oauth.baseUrl, uiRedirectUrl: oauth.uiRedirectUrl },
      signing_key: settings.signingKeyHex ? '[set]' : '[ephemeral]',
    });
  });

  router.post('/dev/token', async (req, res) => {
    await requireDevKey(req);
    const { user_id: userId } = tokenBody.parse(req.body ?? {});
    answerToken(res, await auth.mintFor(userId));
  });

  // The page holds no data (but the dev key with auto-login); its script calls the API with the key.
  router.use('/insight', pageSecurityHeaders, noStore);
  router.get(['/insight', '/insight/api-docs'], (_req, res) => {
    res.type('html').send(insightPage({ embedKey: settings.dev.autoLogin ? settings.dev.apiKey : undefined }));
  });
  router.get('/insight/insight.js', (_req, res) => {
    res.type('js').send(INSIGHT_SCRIPT);
  });
  return router;
}
