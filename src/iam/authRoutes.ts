// /auth routes: bootstrap, token (password grant), me, refresh, logout, jwks.json.
import { Router } from 'express';
import { BadRequestError } from '../kernel/errors.js';
import { compileValidator } from '../kernel/validation.js';
import type { Authenticator } from '../http/authenticator.js';
import { answerToken } from './answerToken.js';
import type { AuthService } from './signIn.js';
import type { SigningKeys } from './keys.js';

const bootstrapBody = compileValidator<{ email: string; password: string; tenant?: string }>({
  type: 'object',
  properties: { email: { type: 'string', maxLength: 254 }, password: { type: 'string' }, tenant: { type: 'string' } },
  required: ['email', 'password'],
  additionalProperties: false,
});

const tokenBody = compileValidator<{ username: string; password: string; grant_type?: string }>({
  type: 'object',
  properties: {
    username: { type: 'string', maxLength: 320 },
    password: { type: 'string' },
    grant_type: { type: 'string' },
    scope: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: { type: 'string' },
  },
  required: ['username', 'password'],
  additionalProperties: false,
});

export function authRouter(deps: { auth: AuthService; authenticator: Authenticator; keys: SigningKeys }): Router {
  const { auth, authenticator, keys } = deps;
  const router = Router();

  router.post('/auth/bootstrap', async (req, res) => {
    const body = bootstrapBody.parse(req.body ?? {});
    const { userId, minted } = await auth.bootstrap(body.email, body.password, body.tenant);
    answerToken(res, minted, { message: 'Bootstrap complete: superadmin created', user_id: userId });
  });

  router.post('/auth/token', async (req, res) => {
    const body = tokenBody.parse(req.body ?? {});
    if (body.grant_type !== undefined && body.grant_type !== 'password') {
      throw new BadRequestError('unsupported grant_type: only "password" is accepted here');
    }
    // req.ip: the peer, or the client a proxy trusted by SVC_TRUST_PROXY names in X-Forwarded-For.
    const minted = await auth.login(body.username, body.password, req.ip ?? req.socket.remoteAddress ?? '');
    // A success is logged at info like every refusal (a 2xx request line is only debug): who, never the token.
    req.log.info({ user_id: minted.claims.sub, method: 'password' }, 'signed in');
    answerToken(res, minted);
  });

  router.get('/auth/me', authenticator.authenticate, (req, res) => {
    const principal = req.principal!;
    res.json({
      user_id: principal.userId,
      groups: principal.groups,
      scopes: principal.scopes,
      ...(principal.tenant ? { tenant: principal.tenant } : {}),
    });
  });

  router.post('/auth/refresh', authenticator.authenticate, async (req, res) => {
    answerToken(res, await auth.refresh(req.principal!));
  });

  router.post('/auth/logout', authenticator.authenticate, async (req, res) => {
    await auth.logout(req.principal!);
    res.status(204).end();
  });

  router.get('/auth/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(keys.jwks);
  });

  return router;
}
