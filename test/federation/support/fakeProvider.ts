// A local OAuth 2.0 / OpenID Connect provider on 127.0.0.1 speaking the real wire protocol: authorize,
// token (client secret, redirect_uri, PKCE S256, one-time codes), JWKS, userinfo, GitHub's /user and /user/emails.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

/** Who signs in with the next code, and how the provider misbehaves for it. */
export interface FakeProfile {
  /** OIDC `sub` (also the userinfo `sub`). */
  sub?: string;
  email?: string | null;
  email_verified?: boolean;
  /** Microsoft: tenant and object id (the token's `tid` and `oid`). */
  tid?: string;
  oid?: string;
  /** GitHub: the numeric id of /user and the list of /user/emails. */
  githubId?: number;
  githubEmails?: { email: string; verified: boolean; primary: boolean }[];
  /** Overrides of the ID token's claims, to test the client's checks. */
  idToken?: { nonce?: string; aud?: string; iss?: string; expiresIn?: number; signedBy?: 'provider' | 'rogue' };
}

export interface AuthorizeRequest {
  client_id: string | null;
  redirect_uri: string | null;
  response_type: string | null;
  scope: string | null;
  state: string | null;
  nonce: string | null;
  code_challenge: string | null;
  code_challenge_method: string | null;
}

export interface TokenRequest {
  code: string;
  client_id: string | null;
  redirect_uri: string | null;
  code_verifier: string | null;
  outcome: 'issued' | string;
}

interface IssuedCode {
  request: AuthorizeRequest;
  profile: FakeProfile;
  used: boolean;
}

const KID = 'fake-key-1';
export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

export class FakeProvider {
  readonly authorizeRequests: AuthorizeRequest[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  /** Codes may be redeemed again (to prove a guarantee comes from the service, not from the provider). */
  allowCodeReuse = false;
  private server: Server | undefined;
  private readonly clients = new Map<string, string>();
  private readonly codes = new Map<string, IssuedCode>();
  private readonly accessTokens = new Map<string, FakeProfile>();
  private readonly queued: FakeProfile[] = [];
  private defaultProfile: FakeProfile = { sub: 'default-sub', email: 'default@example.com', email_verified: true };
  private key!: { privateKey: CryptoKey; jwk: JWK };
  private rogueKey!: CryptoKey;
  url = '';
  port = 0;

  async start(): Promise<this> {
    const pair = await generateKeyPair('RS256');
    this.key = { privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' } };
    this.rogueKey = (await generateKeyPair('RS256')).privateKey;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => this.send(res, 500, { error: 'server_error', error_description: String(error) }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }

  addClient(clientId: string, clientSecret: string): void {
    this.clients.set(clientId, clientSecret);
  }

  /** The profile of the next authorization (queued in order); after the queue, the default one. */
  willSignIn(...profiles: FakeProfile[]): void {
    this.queued.push(...profiles);
  }

  setDefaultProfile(profile: FakeProfile): void {
    this.defaultProfile = profile;
  }

  lastAuthorize(): AuthorizeRequest {
    const last = this.authorizeRequests.at(-1);
    if (!last) throw new Error('The fake provider saw no authorization request');
    return last;
  }

  /** The issuer the fake puts in ID tokens: per tenant for Microsoft-style profiles. */
  issuerFor(profile: Pick<FakeProfile, 'tid'>): string {
    return profile.tid ? `${this.url}/${profile.tid}/v2.0` : this.url;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (req.method === 'GET' && url.pathname === '/authorize') return this.authorize(url, res);
    if (req.method === 'POST' && url.pathname === '/token') return this.token(new URLSearchParams(await readBody(req)), res);
    if (req.method === 'GET' && url.pathname === '/jwks') return this.send(res, 200, { keys: [this.key.jwk] });
    const profile = this.bearer(req);
    if (req.method === 'GET' && ['/userinfo', '/user', '/user/emails'].includes(url.pathname) && !profile) {
      return this.send(res, 401, { error: 'invalid_token' });
    }
    if (req.method === 'GET' && url.pathname === '/userinfo') {
      return this.send(res, 200, { sub: profile!.sub, email: profile!.email, email_verified: profile!.email_verified });
    }
    // GitHub: the public profile's `email` is not a verified address; only /user/emails says which are.
    if (req.method === 'GET' && url.pathname === '/user') {
      return this.send(res, 200, { id: profile!.githubId, login: `user${profile!.githubId}`, email: 'public-profile@spoofed.example' });
    }
    if (req.method === 'GET' && url.pathname === '/user/emails') return this.send(res, 200, profile!.githubEmails ?? []);
    this.send(res, 404, { error: 'not_found' });
  }

  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const request: AuthorizeRequest = {
      client_id: q.get('client_id'),
      redirect_uri: q.get('redirect_uri'),
      response_type: q.get('response_type'),
      scope: q.get('scope'),
      state: q.get('state'),
      nonce: q.get('nonce'),
      code_challenge: q.get('code_challenge'),
      code_challenge_method: q.get('code_challenge_method'),
    };
    this.authorizeRequests.push(request);
    if (!request.client_id || !this.clients.has(request.client_id) || !request.redirect_uri) {
      return this.send(res, 400, { error: 'invalid_request', error_description: 'unknown client or no redirect_uri' });
    }
    if (request.response_type !== 'code' || !request.code_challenge || request.code_challenge_method !== 'S256') {
      return this.redirectError(res, request, 'invalid_request');
    }
    const code = randomBytes(16).toString('base64url');
    this.codes.set(code, { request, profile: this.queued.shift() ?? this.defaultProfile, used: false });
    const target = new URL(request.redirect_uri);
    target.searchParams.set('code', code);
    if (request.state !== null) target.searchParams.set('state', request.state);
    res.writeHead(302, { location: target.toString() }).end();
  }

  private async token(form: URLSearchParams, res: ServerResponse): Promise<void> {
    const code = form.get('code') ?? '';
    const record: TokenRequest = {
      code,
      client_id: form.get('client_id'),
      redirect_uri: form.get('redirect_uri'),
      code_verifier: form.get('code_verifier'),
      outcome: 'issued',
    };
    this.tokenRequests.push(record);
    const fail = (status: number, error: string) => {
      record.outcome = error;
      this.send(res, status, { error });
    };
    const clientId = form.get('client_id');
    if (!clientId || this.clients.get(clientId) !== form.get('client_secret')) return fail(401, 'invalid_client');
    if (form.get('grant_type') !== 'authorization_code') return fail(400, 'unsupported_grant_type');
    const issued = this.codes.get(code);
    if (!issued || (issued.used && !this.allowCodeReuse)) return fail(400, 'invalid_grant');
    issued.used = true;
    if (issued.request.client_id !== clientId || issued.request.redirect_uri !== form.get('redirect_uri')) return fail(400, 'invalid_grant');
    const verifier = form.get('code_verifier');
    if (!verifier || s256(verifier) !== issued.request.code_challenge) return fail(400, 'invalid_grant');
    const accessToken = randomBytes(16).toString('base64url');
    this.accessTokens.set(accessToken, issued.profile);
    const scopes = (issued.request.scope ?? '').split(/\s+/);
    const body: Record<string, unknown> = { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: issued.request.scope };
    if (scopes.includes('openid')) body.id_token = await this.idToken(issued);
    this.send(res, 200, body);
  }

  private async idToken({ request, profile }: IssuedCode): Promise<string> {
    const o = profile.idToken ?? {};
    const claims: Record<string, unknown> = {
      nonce: o.nonce ?? request.nonce ?? undefined,
      email: profile.email ?? undefined,
      email_verified: profile.email_verified,
      ...(profile.tid ? { tid: profile.tid, oid: profile.oid } : {}),
    };
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(JSON.parse(JSON.stringify(claims)) as Record<string, unknown>)
      .setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' })
      .setIssuer(o.iss ?? this.issuerFor(profile))
      .setAudience(o.aud ?? request.client_id!)
      .setSubject(profile.sub ?? `sub-${profile.oid ?? 'unknown'}`)
      .setIssuedAt(now)
      .setExpirationTime(now + (o.expiresIn ?? 300))
      .sign(o.signedBy === 'rogue' ? this.rogueKey : this.key.privateKey);
  }

  private bearer(req: IncomingMessage): FakeProfile | undefined {
    const match = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '');
    return match ? this.accessTokens.get(match[1]!) : undefined;
  }

  private redirectError(res: ServerResponse, request: AuthorizeRequest, error: string): void {
    const target = new URL(request.redirect_uri!);
    target.searchParams.set('error', error);
    if (request.state !== null) target.searchParams.set('state', request.state);
    res.writeHead(302, { location: target.toString() }).end();
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
