// SVC_OAUTH_UI_REDIRECT_URL: the callback hands the token to the configured UI, never to a place named in the request.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, expectError } from '../support/http.js';
import type { FakeProvider } from './support/fakeProvider.js';
import { Browser, startFakeProvider, startFederationService } from './support/harness.js';

const UI_URL = 'http://ui.example.test/signed-in?from=svc';
const EVIL = 'http://evil.example.test/steal';

describe('federated login with SVC_OAUTH_UI_REDIRECT_URL', () => {
  let fake: FakeProvider;
  let service: Service;
  let plain: Service;
  before(async () => {
    fake = await startFakeProvider();
    service = await startFederationService(fake, { env: { SVC_OAUTH_UI_REDIRECT_URL: UI_URL } });
    plain = await startFederationService(fake);
  });
  after(async () => {
    await service?.close();
    await plain?.close();
    await fake?.stop();
  });

  it('redirects (302) to the configured URL with ?token=, Referrer-Policy: no-referrer, and the token works on /auth/me', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'ui-1', email: 'ui@example.com', email_verified: true });
    const result = await browser.signIn('google');
    expect(result.status, JSON.stringify(result.body)).to.equal(302);
    expect(result.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(result.headers.get('cache-control')).to.equal('no-store');
    const location = new URL(result.headers.get('location')!);
    expect(location.origin + location.pathname).to.equal('http://ui.example.test/signed-in');
    expect(location.searchParams.get('from')).to.equal('svc');
    const token = location.searchParams.get('token')!;
    const me = await call(service.url, 'GET', '/auth/me', { token });
    expect(me.status).to.equal(200);
    expect(me.body.user_id).to.be.a('string');
  });

  it('takes the redirect target from configuration only, whatever the request says', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'ui-2', email: 'ui2@example.com', email_verified: true });
    const evilQuery = `?redirect_uri=${encodeURIComponent(EVIL)}&redirect=${encodeURIComponent(EVIL)}&next=${encodeURIComponent(EVIL)}&return_to=${encodeURIComponent(EVIL)}`;
    const { callbackUrl } = await browser.startLogin('google', evilQuery);
    // The provider was given the service's own callback, not the request's.
    expect(fake.lastAuthorize().redirect_uri).to.equal(`${service.url}/auth/oauth/google/callback`);
    for (const name of ['redirect_uri', 'redirect', 'next', 'return_to', 'ui_redirect_url']) callbackUrl.searchParams.set(name, EVIL);
    const result = await fetch(callbackUrl, {
      redirect: 'manual',
      headers: { cookie: browser.cookie!, referer: EVIL, origin: 'http://evil.example.test', 'x-forwarded-host': 'evil.example.test' },
    });
    expect(result.status).to.equal(302);
    const location = result.headers.get('location')!;
    expect(location.startsWith('http://ui.example.test/signed-in?')).to.equal(true);
    expect(location).to.not.include('evil');
  });

  it('answers the token as JSON when no UI URL is configured, even if the request names one', async () => {
    const browser = new Browser(plain.url);
    fake.willSignIn({ sub: 'ui-3', email: 'ui3@example.com', email_verified: true });
    const { callbackUrl } = await browser.startLogin('google');
    callbackUrl.searchParams.set('redirect_uri', EVIL);
    const result = await browser.finishLogin(callbackUrl);
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.headers.get('location')).to.equal(null);
    expect(result.body).to.include({ token_type: 'bearer' });
    expect(result.headers.get('cache-control')).to.equal('no-store');
    expect(result.headers.get('referrer-policy')).to.equal(null);
  });

  it('does not redirect a failed login to the UI with anything', async () => {
    const browser = new Browser(service.url);
    const { callbackUrl } = await browser.startLogin('google');
    const result = await browser.finishLogin(callbackUrl, null);
    expectError(result, 400, 'BAD_REQUEST');
    expect(result.headers.get('location')).to.equal(null);
  });
});
