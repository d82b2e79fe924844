// The one-time login state, PKCE and the ID token checks: every broken callback is a 4xx that creates nobody.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { call, expectError, type HttpResult } from '../support/http.js';
import type { FakeProfile, FakeProvider } from './support/fakeProvider.js';
import { Browser, countUsers, fetchManual, signIn, startFakeProvider, startFederationService, usersWhere } from './support/harness.js';

const SIGNING_KEY = randomBytes(32).toString('hex');
/** How svc_oauth_states keys a state (its SHA-256), so one test's row can be aged or tampered with. */
const stateHash = (state: string) => createHash('sha256').update(state).digest('hex');

describe('federated login: state, PKCE and ID token checks', () => {
  let fake: FakeProvider;
  let service: Service;
  let databaseUrl: string;
  before(async () => {
    fake = await startFakeProvider();
    databaseUrl = await createTestDatabase();
    service = await startFederationService(fake, { databaseUrl, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });
  afterEach(() => {
    fake.allowCodeReuse = false;
  });

  const exchanges = () => fake.tokenRequests.length;
  const expectStateRefused = (result: HttpResult, detail: RegExp) => {
    expectError(result, 400, 'BAD_REQUEST');
    expect(result.body.detail).to.match(detail);
  };

  it('refuses a callback without state, before any code exchange', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'nostate', email: 'nostate@example.com', email_verified: true });
    const { callbackUrl } = await browser.startLogin('google');
    const before = exchanges();
    callbackUrl.searchParams.delete('state');
    expectStateRefused(await browser.finishLogin(callbackUrl), /no state/);
    expect(exchanges()).to.equal(before);
    expect(await usersWhere(service.kernel.pool, "federated_sub = 'nostate'")).to.deep.equal([]);
  });

  it("refuses a state started in another browser (another browser's cookie, or none); that browser's own login still works", async () => {
    const alice = new Browser(service.url);
    const mallory = new Browser(service.url);
    fake.willSignIn(
      { sub: 'alice-s', email: 'alice-s@example.com', email_verified: true },
      { sub: 'mallory-s', email: 'mallory-s@example.com', email_verified: true },
    );
    const aliceLogin = await alice.startLogin('google');
    const malloryLogin = await mallory.startLogin('google');
    expect(alice.cookie).to.not.equal(mallory.cookie);
    const before = exchanges();
    // Login CSRF: Mallory's callback pushed into Alice's browser.
    expectStateRefused(await alice.finishLogin(malloryLogin.callbackUrl), /another browser/);
    // A callback arriving without the binding cookie at all (a link opened elsewhere).
    const carol = await new Browser(service.url).startLogin('google');
    expectStateRefused(await alice.finishLogin(carol.callbackUrl, null), /another browser/);
    expect(exchanges()).to.equal(before);
    expect(await usersWhere(service.kernel.pool, "federated_sub IN ('alice-s', 'mallory-s')")).to.deep.equal([]);
    // The refusals burn only the states they named.
    fake.willSignIn({ sub: 'alice-s', email: 'alice-s@example.com', email_verified: true });
    const ok = await alice.finishLogin(aliceLogin.callbackUrl);
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('refuses a replayed callback even when the provider would redeem the code again', async () => {
    fake.allowCodeReuse = true;
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'replay', email: 'replay@example.com', email_verified: true });
    const { callbackUrl } = await browser.startLogin('google');
    const first = await browser.finishLogin(callbackUrl);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const before = exchanges();
    expectStateRefused(await browser.finishLogin(callbackUrl), /already used/);
    expect(exchanges(), 'the replay never reaches the provider').to.equal(before);
  });

  it('refuses a state of one provider at the callback of another', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'cross', email: 'cross@corp.example', email_verified: true });
    const { callbackUrl } = await browser.startLogin('google');
    const elsewhere = new URL(callbackUrl);
    elsewhere.pathname = '/auth/oauth/corp/callback';
    const cookie = browser.cookie!;
    expectStateRefused(await browser.finishLogin(elsewhere, cookie), /state/);
    expect(await usersWhere(service.kernel.pool, "federated_sub = 'cross'")).to.deep.equal([]);
  });

  it('refuses an expired state (older than its expiry) and accepts one just inside it', async () => {
    const pool = service.kernel.pool;
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'late', email: 'late@example.com', email_verified: true });
    const late = await browser.startLogin('google');
    await pool.query("UPDATE svc_oauth_states SET expires_at = now() - interval '1 second' WHERE state_hash = $1", [stateHash(late.state)]);
    const before = exchanges();
    expectStateRefused(await browser.finishLogin(late.callbackUrl), /too long/);
    expect(exchanges()).to.equal(before);
    expect(await usersWhere(pool, "federated_sub = 'late'")).to.deep.equal([]);

    fake.willSignIn({ sub: 'late', email: 'late@example.com', email_verified: true });
    const inTime = await browser.startLogin('google');
    await pool.query("UPDATE svc_oauth_states SET expires_at = now() + interval '5 seconds' WHERE state_hash = $1", [stateHash(inTime.state)]);
    expect((await browser.finishLogin(inTime.callbackUrl)).status).to.equal(200);
  });

  it('sends the stored PKCE verifier: a tampered verifier is refused by the provider and creates nobody', async () => {
    const pool = service.kernel.pool;
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'pkce', email: 'pkce@example.com', email_verified: true });
    const { callbackUrl, state } = await browser.startLogin('google');
    const tampered = randomBytes(32).toString('base64url');
    const { rowCount } = await pool.query('UPDATE svc_oauth_states SET code_verifier = $1 WHERE state_hash = $2', [tampered, stateHash(state)]);
    expect(rowCount).to.equal(1);
    const result = await browser.finishLogin(callbackUrl);
    expectError(result, 400, 'BAD_REQUEST');
    const exchange = fake.tokenRequests.at(-1)!;
    expect(exchange).to.include({ code_verifier: tampered, outcome: 'invalid_grant' });
    expect(await usersWhere(pool, "federated_sub = 'pkce'")).to.deep.equal([]);
  });

  it('answers 400 when the provider redirects back with an error (the user said no)', async () => {
    const browser = new Browser(service.url);
    const { callbackUrl, state } = await browser.startLogin('google');
    const denied = new URL(callbackUrl.pathname, service.url);
    denied.searchParams.set('error', 'access_denied');
    denied.searchParams.set('state', state);
    const result = await browser.finishLogin(denied);
    expectError(result, 400, 'BAD_REQUEST');
    expect(result.body.detail).to.match(/access_denied/);
  });

  const badTokens: [string, (fake: FakeProvider) => FakeProfile['idToken']][] = [
    ['a nonce other than the one sent', () => ({ nonce: 'not-the-nonce' })],
    ['an audience other than the client id', () => ({ aud: 'someone-else' })],
    ['an issuer other than the configured one', (f) => ({ iss: `${f.url}/evil` })],
    ['a signature by a key not in the provider key set', () => ({ signedBy: 'rogue' })],
    ['an expiry in the past', () => ({ expiresIn: -600 })],
  ];
  for (const [what, idToken] of badTokens) {
    it(`refuses an ID token with ${what}: 4xx, no user, no sign-in`, async () => {
      const pool = service.kernel.pool;
      const users = await countUsers(pool);
      const sub = `bad-${randomBytes(4).toString('hex')}`;
      const result = await signIn(service, fake, 'google', { sub, email: `${sub}@example.com`, email_verified: true, idToken: idToken(fake) });
      expect(result.status, JSON.stringify(result.body)).to.be.within(400, 499);
      expect(result.body).to.not.have.property('access_token');
      expect(fake.tokenRequests.at(-1)!.outcome, 'the code exchange itself succeeded').to.equal('issued');
      expect(await countUsers(pool)).to.equal(users);
      const { rows } = await pool.query("SELECT 1 FROM events WHERE type IN ('UserCreated', 'UserSignedIn') AND data->>'email' = $1", [`${sub}@example.com`]);
      expect(rows).to.deep.equal([]);
    });
  }

  it('finishes a callback sent to two instances at once exactly once', async () => {
    const other = await startFederationService(fake, { databaseUrl, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_OAUTH_BASE_URL: service.url } });
    try {
      // The provider would redeem the code twice: only the state can stop the second login.
      fake.allowCodeReuse = true;
      for (let round = 0; round < 5; round++) {
        const browser = new Browser(service.url);
        fake.willSignIn({ sub: `race-${round}`, email: `race-${round}@example.com`, email_verified: true });
        const { callbackUrl } = await browser.startLogin('google');
        const onOther = new URL(callbackUrl.pathname + callbackUrl.search, other.url);
        const results = await Promise.all([browser.finishLogin(callbackUrl), browser.finishLogin(onOther)]);
        const statuses = results.map((r) => r.status).sort();
        expect(statuses, JSON.stringify(results.map((r) => r.body))).to.deep.equal([200, 400]);
        const winner = results.find((r) => r.status === 200)!;
        for (const url of [service.url, other.url]) {
          expect((await call(url, 'GET', '/auth/me', { token: winner.body.access_token })).status).to.equal(200);
        }
        expect(await usersWhere(service.kernel.pool, 'federated_sub = $1', [`race-${round}`])).to.have.length(1);
      }
    } finally {
      await other.close();
    }
  });
});

describe('federated login behind a path-prefix proxy', () => {
  let fake: FakeProvider;
  let service: Service;
  before(async () => {
    fake = await startFakeProvider();
    service = await startFederationService(fake, { env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_OAUTH_BASE_URL: 'https://gateway.example/svc' } });
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  it('scopes the binding cookie to the path the browser sees, prefix included, and marks it Secure, HttpOnly and __Secure- (ASVS 3.3.1)', async () => {
    const start = await fetchManual(`${service.url}/auth/oauth/google/start`);
    expect(start.status).to.equal(302);
    expect(new URL(start.headers.get('location')!).searchParams.get('redirect_uri')).to.equal('https://gateway.example/svc/auth/oauth/google/callback');
    const cookie = start.headers.getSetCookie().find((c) => c.startsWith('__Secure-svc_oauth_binding='))!;
    expect(cookie).to.match(/; Path=\/svc\/auth\/oauth\/google(;|$)/);
    expect(cookie).to.match(/; Secure(;|$)/);
    expect(cookie).to.match(/; HttpOnly(;|$)/);
    expect(cookie).to.match(/; SameSite=Lax(;|$)/i);
  });
});
