// Dev mode only: /dev/* (JSON, the dev key as bearer) and /insight (a page over the API). Both are
// absent (404) outside dev mode and refuse addresses outside SVC_DEV_IP_ALLOWLIST.
import { Router, type Request } from 'express';
import type { Authenticator } from '../auth/middleware.js';
import type { AuthService } from '../auth/service.js';
import type { Settings } from '../config/settings.js';
import { tokenResponse } from '../auth/service.js';
import { NotFoundError, PermissionDeniedError, UnauthenticatedError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import { insightPage } from './insight.js';

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

export function devRouter(deps: { settings: Settings; authenticator: Authenticator; auth: AuthService }): Router {
  const { settings, authenticator, auth } = deps;
  const router = Router();
  const allowedIp = (req: Request) => settings.dev.ipAllowlist.includes((req.socket.remoteAddress ?? '').replace(/^::ffff:/, ''));
  const requireDevKey = async (req: Request) => {
    if (!allowedIp(req)) throw new PermissionDeniedError('Dev routes answer only to SVC_DEV_IP_ALLOWLIST');
    const principal = await authenticator.principalOf(req);
    if (!principal.isDev) throw new UnauthenticatedError('Dev routes need the dev key as bearer token');
  };

  router.use(['/dev', '/insight'], (req, _res, next) => {
    if (!settings.dev.enabled || !settings.dev.apiKey) throw new NotFoundError(`No route for ${req.method} ${req.path}`);
    if (!allowedIp(req)) throw new PermissionDeniedError('Dev routes answer only to SVC_DEV_IP_ALLOWLIST');
    next();
  });

  router.get('/dev/settings', async (req, res) => {
    await requireDevKey(req);
    const { signingKeyHex: _key, dev, environment: _environment, oauth, ...visible } = settings;
    res.json({ ...visible, databaseUrl: maskPassword(visible.databaseUrl), redisUrl: maskPassword(visible.redisUrl), dev: { ...dev, apiKey: '[set]' }, oauth: { baseUrl: oauth.baseUrl, uiRedirectUrl: oauth.uiRedirectUrl }, signing_key: settings.signingKeyHex ? '[set]' : '[ephemeral]' });
  });

  router.post('/dev/token', async (req, res) => {
    await requireDevKey(req);
    const { user_id: userId } = tokenBody.parse(req.body ?? {});
    res.json(tokenResponse(await auth.mintFor(userId)));
  });

  // The page holds no data; its script calls the API with the dev key.
  router.get(['/insight', '/insight/api-docs'], (req, res) => {
    res.setHeader('Content-Security-Policy', "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-src 'self'");
    res.type('html').send(insightPage({ embedKey: settings.dev.autoLogin ? settings.dev.apiKey : undefined, apiDocs: req.path.endsWith('/api-docs') }));
  });
  return router;
}
