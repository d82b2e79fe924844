// /auth/admin/federation: listing with secrets redacted, PUT/DELETE as events, `${VAR}` resolution and the
// SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET fallback; each change proven by a real login at the fake provider.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, call, client, expectError, expectUnauthenticated, type Admin } from '../support/http.js';
import { emptyProjectDir, startTestService } from '../support/service.js';
import type { FakeProvider } from './support/fakeProvider.js';
import { Browser, CLIENTS, eventsOfStream, fetchManual, signIn, signInOk, startFakeProvider, startFederationService } from './support/harness.js';

const PARTNER = { id: 'partner-client', secret: 'partner-secret-value-1234' };

describe('federation provider administration', () => {
  let fake: FakeProvider;
  let service: Service;
  let admin: Admin;
  let api: ReturnType<typeof client>;
  before(async () => {
    fake = await startFakeProvider();
    fake.addClient(PARTNER.id, PARTNER.secret);
    service = await startFederationService(fake);
    admin = await bootstrapAdmin(service.url);
    api = client(service.url, admin.token);
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  const partnerDocument = (secret: string, extra: Record<string, unknown> = {}) => ({
    kind: 'FederationProvider',
    version: 'v1',
    metadata: { name: 'partner' },
    enabled: true,
    spec: {
      provider: 'custom',
      client_id: PARTNER.id,
      client_secret: secret,
      auth_url: `${fake.url}/authorize`,
      token_url: `${fake.url}/token`,
      issuer: fake.url,
      jwks_url: `${fake.url}/jwks`,
      scope: 'openid email',
      ...extra,
    },
  });
  const allSecrets = () => [...Object.values(CLIENTS).map((c) => c.secret), PARTNER.secret];

  it('requires iam:admin on every admin route (401 without a token, 403 without the scope)', async () => {
    const user = await signInOk(service, fake, 'google', { sub: 'plain-user', email: 'plain@example.com', email_verified: true });
    const routes: [string, string][] = [
      ['GET', '/auth/admin/federation'],
      ['GET', '/auth/admin/federation/google'],
      ['PUT', '/auth/admin/federation/partner'],
      ['DELETE', '/auth/admin/federation/partner'],
    ];
    for (const [method, path] of routes) {
      const json = method === 'PUT' ? partnerDocument(PARTNER.secret) : undefined;
      expectUnauthenticated(await call(service.url, method, path, { json }));
      expectError(await call(service.url, method, path, { json, token: user.token }), 403, 'PERMISSION_DENIED');
    }
    expectError(await api.get('/auth/admin/federation/partner'), 404, 'NOT_FOUND');
  });

  it('lists the providers in effect with client_secret shown as ***, never the secret', async () => {
    const list = await api.get('/auth/admin/federation');
    expect(list.status).to.equal(200);
    const text = JSON.stringify(list.body);
    for (const secret of allSecrets()) expect(text).to.not.include(secret);
    const byName = Object.fromEntries((list.body as { metadata: { name: string } }[]).map((p) => [p.metadata.name, p])) as Record<string, any>;
    expect(Object.keys(byName).sort()).to.deep.equal(['acme', 'corp', 'entra', 'github', 'google', 'microsoft', 'nocreds', 'switchedoff']);
    expect(byName.google).to.deep.include({ source: 'project', has_credentials: true, enabled: true });
    expect(byName.google.spec).to.include({ provider: 'google', client_secret: '***', default_role: 'staff' });
    expect(byName.github).to.deep.include({ source: 'project', has_credentials: true });
    expect(byName.github.spec).to.not.have.property('client_secret');
    expect(byName.nocreds).to.deep.include({ has_credentials: false });
    expect(byName.switchedoff).to.deep.include({ enabled: false });

    const one = await api.get('/auth/admin/federation/microsoft');
    expect(one.status).to.equal(200);
    expect(one.body.spec).to.include({ client_secret: '***', tenant_id: 'tenant-a' });
    expect(JSON.stringify(one.body)).to.not.include(CLIENTS.microsoft.secret);
  });

  it('skips a project provider whose ${VAR} is unset: absent from the list, 404 at start', async () => {
    expectError(await api.get('/auth/admin/federation/unsetvar'), 404, 'NOT_FOUND');
    expectError(await call(service.url, 'GET', '/auth/oauth/unsetvar/start'), 404, 'NOT_FOUND');
  });

  it('PUT creates a provider (an event on federation-<name>) that signs users in at once, redacted in the answer', async () => {
    const put = await api.put('/auth/admin/federation/partner', partnerDocument(PARTNER.secret));
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body).to.deep.include({ source: 'admin', has_credentials: true });
    expect(put.body.spec.client_secret).to.equal('***');
    expect(JSON.stringify(put.body)).to.not.include(PARTNER.secret);
    const events = await eventsOfStream(service.kernel.pool, 'federation-partner');
    expect(events.map((e) => e.type)).to.deep.equal(['FederationProviderSaved']);
    expect(events[0]!.data).to.include({ name: 'partner' });

    const got = await api.get('/auth/admin/federation/partner');
    expect(got.body.spec).to.include({ client_id: PARTNER.id, client_secret: '***' });
    expect(JSON.stringify(got.body)).to.not.include(PARTNER.secret);
    await signInOk(service, fake, 'partner', { sub: 'partner-1', email: 'p1@partner.example', email_verified: true });
    expect(fake.tokenRequests.at(-1)).to.include({ client_id: PARTNER.id, outcome: 'issued' });
  });

  it('PUT updates: *** sent back keeps the stored secret, a new secret replaces it', async () => {
    const keep = await api.put('/auth/admin/federation/partner', partnerDocument('***', { allowed_domains: ['partner.example'] }));
    expect(keep.status, JSON.stringify(keep.body)).to.equal(200);
    expect(keep.body.spec.allowed_domains).to.deep.equal(['partner.example']);
    // The fake checks the client secret: a login only works if the stored secret was kept.
    await signInOk(service, fake, 'partner', { sub: 'partner-2', email: 'p2@partner.example', email_verified: true });
    expectError(await signIn(service, fake, 'partner', { sub: 'partner-3', email: 'p3@elsewhere.example', email_verified: true }), 403, 'PERMISSION_DENIED');

    expect((await api.put('/auth/admin/federation/partner', partnerDocument('a-wrong-secret'))).status).to.equal(200);
    expectError(await signIn(service, fake, 'partner', { sub: 'partner-4', email: 'p4@partner.example', email_verified: true }), 400);
    expect(fake.tokenRequests.at(-1)!.outcome).to.equal('invalid_client');

    expect((await api.put('/auth/admin/federation/partner', partnerDocument(PARTNER.secret))).status).to.equal(200);
    await signInOk(service, fake, 'partner', { sub: 'partner-4', email: 'p4@partner.example', email_verified: true });
    const events = await eventsOfStream(service.kernel.pool, 'federation-partner');
    expect(events.map((e) => e.type)).to.deep.equal(Array(4).fill('FederationProviderSaved'));
  });

  it('PUT refuses *** for a provider without a stored secret, a mismatched metadata.name and an invalid name', async () => {
    expectError(await api.put('/auth/admin/federation/fresh', { ...partnerDocument('***'), metadata: { name: 'fresh' } }), 400);
    expectError(await api.put('/auth/admin/federation/fresh', partnerDocument(PARTNER.secret)), 400);
    expectError(await api.put('/auth/admin/federation/Bad%20Name', { ...partnerDocument(PARTNER.secret), metadata: undefined }), 400);
    expectError(await api.get('/auth/admin/federation/fresh'), 404);
  });

  it('PUT of a document whose ${VAR} is unset saves it but leaves the provider absent', async () => {
    const doc = { ...partnerDocument('${SVC_OAUTH_NEVER_SET_SECRET}'), metadata: { name: 'pending' } };
    const put = await api.put('/auth/admin/federation/pending', doc);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.skipped).to.match(/SVC_OAUTH_NEVER_SET_SECRET/);
    expectError(await api.get('/auth/admin/federation/pending'), 404);
    expectError(await call(service.url, 'GET', '/auth/oauth/pending/start'), 404);
  });

  it('PUT refuses a ${VAR} outside SVC_OAUTH_*: an admin document cannot send the signing key anywhere', async () => {
    const before = await eventsOfStream(service.kernel.pool, 'federation-exfil');
    const attempts: [Record<string, string>, RegExp][] = [
      [{ client_id: '${SVC_SIGNING_KEY}' }, /SVC_OAUTH_/],
      [{ client_secret: '${DATABASE_URL}' }, /SVC_OAUTH_/],
      // Outside the credentials no variable is resolved at all (secrets.e2e.test.ts).
      [{ scope: 'openid ${HOME}' }, /resolved only in client_id and client_secret/],
    ];
    for (const [spec, detail] of attempts) {
      const put = await api.put('/auth/admin/federation/exfil', { ...partnerDocument(PARTNER.secret, spec), metadata: { name: 'exfil' } });
      expectError(put, 400, 'BAD_REQUEST');
      expect(put.body.detail).to.match(detail);
    }
    expect(await eventsOfStream(service.kernel.pool, 'federation-exfil')).to.deep.equal(before);
    expectError(await call(service.url, 'GET', '/auth/oauth/exfil/start'), 404);
  });

  it('PUT refuses an OIDC provider (issuer set) without jwks_url: an ID token is never believed unchecked', async () => {
    const put = await api.put('/auth/admin/federation/unsigned', {
      ...partnerDocument(PARTNER.secret, { jwks_url: undefined }),
      metadata: { name: 'unsigned' },
    });
    expectError(put, 400, 'BAD_REQUEST');
    expect(put.body.detail).to.match(/jwks_url/);
  });

  it("a provider that cannot be reached makes the callback a 503, not the browser's 400", async () => {
    const closedPort = await freePort();
    const put = await api.put('/auth/admin/federation/unreachable', {
      ...partnerDocument(PARTNER.secret, { token_url: `http://127.0.0.1:${closedPort}/token` }),
      metadata: { name: 'unreachable' },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    fake.willSignIn({ sub: 'nobody', email: 'nobody@partner.example', email_verified: true });
    const result = await new Browser(service.url).signIn('unreachable');
    expectError(result, 503, 'UNAVAILABLE');
    expect(result.body.detail).to.match(/could not be reached/);
    expect((await api.delete('/auth/admin/federation/unreachable')).status).to.equal(204);
  });

  it('DELETE answers 204, then the provider is gone (404); a project-file provider answers 409', async () => {
    const deleted = await api.delete('/auth/admin/federation/partner');
    expect(deleted.status).to.equal(204);
    expect((await eventsOfStream(service.kernel.pool, 'federation-partner')).at(-1)!.type).to.equal('FederationProviderDeleted');
    expectError(await api.get('/auth/admin/federation/partner'), 404, 'NOT_FOUND');
    expectError(await call(service.url, 'GET', '/auth/oauth/partner/start'), 404, 'NOT_FOUND');
    expectError(await api.delete('/auth/admin/federation/partner'), 404, 'NOT_FOUND');

    expectError(await api.delete('/auth/admin/federation/google'), 409, 'CONFLICT');
    expectError(await api.delete('/auth/admin/federation/nosuch'), 404, 'NOT_FOUND');
    expect((await api.get('/auth/admin/federation/google')).status).to.equal(200);
  });

  it('an admin override of a project provider wins until deleted, then the project file applies again', async () => {
    const override = {
      kind: 'FederationProvider',
      version: 'v1',
      metadata: { name: 'acme' },
      enabled: false,
      spec: {
        provider: 'custom',
        client_id: CLIENTS.acme.id,
        client_secret: CLIENTS.acme.secret,
        auth_url: `${fake.url}/authorize`,
        token_url: `${fake.url}/token`,
        userinfo_url: `${fake.url}/userinfo`,
      },
    };
    expect((await api.put('/auth/admin/federation/acme', override)).status).to.equal(200);
    expect((await api.get('/auth/admin/federation/acme')).body).to.deep.include({ source: 'admin', enabled: false });
    expectError(await call(service.url, 'GET', '/auth/oauth/acme/start'), 404);
    expect((await api.delete('/auth/admin/federation/acme')).status).to.equal(204);
    expect((await api.get('/auth/admin/federation/acme')).body).to.deep.include({ source: 'project', enabled: true });
    await signInOk(service, fake, 'acme', { sub: 'acme-back', email: 'back@acme.example', email_verified: true });
  });
});

describe('built-in providers from SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET alone', () => {
  let service: Service;
  let api: ReturnType<typeof client>;
  before(async () => {
    const port = await freePort();
    service = await startTestService({
      projectDir: emptyProjectDir(),
      env: {
        PORT: String(port),
        SVC_OAUTH_BASE_URL: `http://127.0.0.1:${port}`,
        SVC_OAUTH_GITHUB_CLIENT_ID: 'gh-env-id',
        SVC_OAUTH_GITHUB_CLIENT_SECRET: 'gh-env-secret-value',
        SVC_OAUTH_GOOGLE_CLIENT_ID: 'google-env-id',
      },
    });
    api = client(service.url, (await bootstrapAdmin(service.url)).token);
  });
  after(async () => {
    await service?.close();
  });

  it('lists github (environment source) without its secret; a missing secret answers 501', async () => {
    const list = await api.get('/auth/admin/federation');
    expect(JSON.stringify(list.body)).to.not.include('gh-env-secret-value');
    const byName = Object.fromEntries((list.body as any[]).map((p) => [p.metadata.name, p]));
    expect(byName.github).to.deep.include({ source: 'environment', has_credentials: true });
    expect(byName.google).to.deep.include({ source: 'environment', has_credentials: false });
    expectError(await call(service.url, 'GET', '/auth/oauth/google/start'), 501, 'NOT_IMPLEMENTED');
  });

  it('google, github and microsoft always exist: a built-in without any file or variable answers 501, not 404', async () => {
    for (const path of ['/auth/oauth/microsoft/start', '/auth/oauth/microsoft/callback?code=x&state=y']) {
      const result = await call(service.url, 'GET', path);
      expectError(result, 501, 'NOT_IMPLEMENTED');
      expect(result.body.detail).to.match(/microsoft.*credentials/);
    }
    const list = await api.get('/auth/admin/federation');
    expect((list.body as any[]).map((p) => p.metadata.name).sort()).to.deep.equal(['github', 'google', 'microsoft']);
    const microsoft = await api.get('/auth/admin/federation/microsoft');
    expect(microsoft.status).to.equal(200);
    expect(microsoft.body).to.deep.include({ source: 'environment', has_credentials: false, enabled: true });
    expectError(await call(service.url, 'GET', '/auth/oauth/nosuch/start'), 404, 'NOT_FOUND');
  });

  it('a saved document whose variables are unset is skipped: the built-in of that name still exists (501)', async () => {
    const put = await api.put('/auth/admin/federation/microsoft', {
      spec: { provider: 'microsoft', client_id: 'ms-id', client_secret: '${SVC_OAUTH_NEVER_SET_SECRET}' },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.skipped).to.match(/SVC_OAUTH_NEVER_SET_SECRET/);
    try {
      expectError(await call(service.url, 'GET', '/auth/oauth/microsoft/start'), 501, 'NOT_IMPLEMENTED');
      expect((await api.get('/auth/admin/federation/microsoft')).body).to.deep.include({ source: 'environment', has_credentials: false });
    } finally {
      expect((await api.delete('/auth/admin/federation/microsoft')).status).to.equal(204);
    }
  });

  it("sends the browser to GitHub's real authorize endpoint with the environment client id", async () => {
    const start = await fetchManual(`${service.url}/auth/oauth/github/start`);
    expect(start.status).to.equal(302);
    const location = new URL(start.headers.get('location')!);
    expect(location.origin + location.pathname).to.equal('https://github.com/login/oauth/authorize');
    expect(location.searchParams.get('client_id')).to.equal('gh-env-id');
    expect(location.searchParams.get('redirect_uri')).to.equal(`${service.url}/auth/oauth/github/callback`);
    expect(location.searchParams.get('code_challenge_method')).to.equal('S256');
    expect(location.toString()).to.not.include('gh-env-secret-value');
  });
});
