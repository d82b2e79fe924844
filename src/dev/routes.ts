// Dev mode only: /dev/* (JSON, the dev key as bearer) and /insight (the console, signed in with the dev
// key). Both are absent (404) outside dev mode, refuse addresses outside SVC_DEV_IP_ALLOWLIST, and answer
// only under the service's own host names.
import { Router, type Request } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import type { AuthService } from '../iam/signIn.js';
import type { Settings } from '../config/settings.js';
import { answerToken } from '../iam/answerToken.js';
import { NotFoundError, PermissionDeniedError, UnauthenticatedError, UnavailableError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import { insightSecurityHeaders, noStore } from '../http/securityHeaders.js';

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

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The console's index page with the dev key in its `svc-dev-key` meta tag (data the bundle reads: no inline script). */
function withDevKey(index: string, devKey: string): string {
  return index.replace('</head>', `<meta name="svc-dev-key" content="${escapeAttribute(devKey)}" />\n</head>`);
}

/** `consoleIndex`: the console's built index page (undefined when not built), served under /insight too. */
export function devRouter(deps: { settings: Settings; authenticator: Authenticator; auth: AuthService; consoleIndex: string | undefined }): Router {
  const { settings, authenticator, auth, consoleIndex } = deps;
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

  // The console, one build for /console and /insight: its files stay under /console/assets, and the app
  // picks its base path from the address. The page holds no data but the dev key under auto-login.
  const devKey = settings.dev.autoLogin ? settings.dev.apiKey : undefined;
  const insightPage = consoleIndex !== undefined && devKey !== undefined ? withDevKey(consoleIndex, devKey) : consoleIndex;
  router.use('/insight', insightSecurityHeaders, noStore);
  router.get(['/insight', '/insight/{*rest}'], (_req, res) => {
    if (insightPage === undefined) throw new UnavailableError('The console is not built: run `npm run build`');
    res.type('html').send(insightPage);
  });
  return router;
}
