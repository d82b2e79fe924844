// Federated login end to end against a local fake provider: Google-like OIDC, GitHub, Microsoft, custom.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, expectError } from '../support/http.js';
import type { FakeProvider } from './support/fakeProvider.js';
import { s256 } from './support/fakeProvider.js';
import { Browser, CLIENTS, countUsers, signIn, signInOk, startFakeProvider, startFederationService, usersWhere } from './support/harness.js';

describe('federated login with each provider kind', () => {
  let fake: FakeProvider;
  let service: Service;
  before(async () => {
    fake = await startFakeProvider();
    service = await startFederationService(fake);
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  it('google (OIDC): start sends the browser to the provider with PKCE S256, state, nonce and the configured redirect URI', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'g-100', email: 'alice@example.com', email_verified: true });
    const { callbackUrl } = await browser.startLogin('google');
    const seen = fake.lastAuthorize();
    expect(seen).to.include({
      client_id: CLIENTS.google.id,
      redirect_uri: `${service.url}/auth/oauth/google/callback`,
      response_type: 'code',
      scope: 'openid email profile',
      code_challenge_method: 'S256',
    });
    expect(seen.state).to.have.length.greaterThan(20);
    expect(seen.nonce).to.have.length.greaterThan(20);
    expect(seen.code_challenge).to.match(/^[A-Za-z0-9_-]{43}$/);

    const result = await browser.finishLogin(callbackUrl);
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.include({ token_type: 'bearer', expires_in: 86400 });
    expect(result.headers.get('cache-control')).to.equal('no-store');
    // The verifier the service sent matches the challenge it published at start.
    const exchange = fake.tokenRequests.at(-1)!;
    expect(exchange.outcome).to.equal('issued');
    expect(s256(exchange.code_verifier!)).to.equal(seen.code_challenge);
    expect(exchange.redirect_uri).to.equal(seen.redirect_uri);

    const me = await call(service.url, 'GET', '/auth/me', { token: result.body.access_token });
    expect(me.status).to.equal(200);
    const [user] = await usersWhere(service.kernel.pool, 'id = $1', [me.body.user_id]);
    expect(user).to.include({ email: 'alice@example.com', federated_provider: 'google', federated_sub: 'g-100', hashed_password: null });
  });

  it('github: keyed by the numeric id; the email is a verified one from /user/emails, never the public profile email', async () => {
    const first = await signInOk(service, fake, 'github', {
      githubId: 4242,
      githubEmails: [
        { email: 'octo-unverified@example.com', verified: false, primary: true },
        { email: 'octo@example.com', verified: true, primary: false },
      ],
    });
    expect(fake.lastAuthorize()).to.include({ client_id: CLIENTS.github.id, scope: 'read:user user:email', nonce: null });
    const [user] = await usersWhere(service.kernel.pool, 'id = $1', [first.userId]);
    expect(user).to.include({ email: 'octo@example.com', federated_provider: 'github', federated_sub: '4242' });
    expect(await usersWhere(service.kernel.pool, "email = 'public-profile@spoofed.example'")).to.deep.equal([]);

    const again = await signInOk(service, fake, 'github', { githubId: 4242, githubEmails: [{ email: 'renamed@example.com', verified: true, primary: true }] });
    expect(again.userId).to.equal(first.userId);
  });

  it('github: an account whose email list has no verified address is refused (403), and nothing is created', async () => {
    const before = await countUsers(service.kernel.pool);
    const result = await signIn(service, fake, 'github', {
      githubId: 777,
      githubEmails: [
        { email: 'squatter@example.com', verified: false, primary: true },
        { email: 'squatter2@example.com', verified: false, primary: false },
      ],
    });
    expectError(result, 403, 'PERMISSION_DENIED');
    expect(await countUsers(service.kernel.pool)).to.equal(before);
    expect(await usersWhere(service.kernel.pool, "federated_sub = '777' OR email LIKE 'squatter%'")).to.deep.equal([]);
  });

  it('microsoft (single tenant): keyed by tid + oid; a token from another tenant is refused', async () => {
    const login = await signInOk(service, fake, 'microsoft', {
      tid: 'tenant-a',
      oid: 'oid-1',
      sub: 'pairwise-1',
      email: 'mia@contoso.example',
      email_verified: true,
    });
    expect(fake.lastAuthorize()).to.include({ client_id: CLIENTS.microsoft.id, scope: 'openid email profile' });
    const [user] = await usersWhere(service.kernel.pool, 'id = $1', [login.userId]);
    expect(user).to.include({ federated_provider: 'microsoft', federated_sub: 'tenant-a:oid-1' });

    const before = await countUsers(service.kernel.pool);
    const foreign = await signIn(service, fake, 'microsoft', {
      tid: 'tenant-b',
      oid: 'oid-1',
      sub: 'pairwise-2',
      email: 'mia@fabrikam.example',
      email_verified: true,
    });
    expectError(foreign, 400);
    expect(await countUsers(service.kernel.pool)).to.equal(before);
  });

  it('microsoft (multi-tenant): the same oid in two tenants is two different accounts', async () => {
    const a = await signInOk(service, fake, 'entra', { tid: 'tenant-x', oid: 'same-oid', sub: 'p-x', email: 'sam@x.example', email_verified: true });
    const b = await signInOk(service, fake, 'entra', { tid: 'tenant-y', oid: 'same-oid', sub: 'p-y', email: 'sam@y.example', email_verified: true });
    expect(a.userId).to.not.equal(b.userId);
    const rows = await usersWhere(service.kernel.pool, "federated_provider = 'entra'");
    expect(rows.map((r) => r.federated_sub).sort()).to.deep.equal(['tenant-x:same-oid', 'tenant-y:same-oid']);
    const aAgain = await signInOk(service, fake, 'entra', { tid: 'tenant-x', oid: 'same-oid', sub: 'p-x2', email: 'sam@x.example', email_verified: true });
    expect(aAgain.userId).to.equal(a.userId);
  });

  it('custom OAuth 2.0: the identity comes from userinfo, and the client secret is checked by the provider', async () => {
    const login = await signInOk(service, fake, 'acme', { sub: 'acme-7', email: 'ann@acme.example', email_verified: true });
    expect(fake.lastAuthorize()).to.include({ client_id: CLIENTS.acme.id, scope: 'profile email', nonce: null });
    const [user] = await usersWhere(service.kernel.pool, 'id = $1', [login.userId]);
    expect(user).to.include({ federated_provider: 'acme', federated_sub: 'acme-7', email: 'ann@acme.example' });
  });

  it('custom OIDC: the ID token is checked and the subject is its sub', async () => {
    const login = await signInOk(service, fake, 'corp', { sub: 'corp-1', email: 'cid@corp.example', email_verified: true });
    expect(fake.lastAuthorize().nonce).to.be.a('string');
    const [user] = await usersWhere(service.kernel.pool, 'id = $1', [login.userId]);
    expect(user).to.include({ federated_provider: 'corp', federated_sub: 'corp-1' });
  });

  it('answers 404 for an unknown or disabled provider and 501 for one without credentials', async () => {
    expectError(await call(service.url, 'GET', '/auth/oauth/nosuch/start'), 404, 'NOT_FOUND');
    expectError(await call(service.url, 'GET', '/auth/oauth/nosuch/callback?code=x&state=y'), 404, 'NOT_FOUND');
    expectError(await call(service.url, 'GET', '/auth/oauth/switchedoff/start'), 404, 'NOT_FOUND');
    const before = fake.authorizeRequests.length;
    expectError(await call(service.url, 'GET', '/auth/oauth/nocreds/start'), 501);
    expectError(await call(service.url, 'GET', '/auth/oauth/nocreds/callback?code=x&state=y'), 501);
    expect(fake.authorizeRequests.length).to.equal(before);
  });
});
