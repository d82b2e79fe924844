// No log line carries a token, at any level (trace included): not the OAuth redirect's `?token=`, not
// the callback's `code` and `state`, not a token in a request URL, not a token answered in a body.
import { expect } from 'chai';
import { createLogger } from '../../src/kernel/logger.js';
import { startService, type Service } from '../../src/main.js';
import { createTestDatabase, freePort } from '../support/db.js';
import { bootstrapAdmin, call, login, type Admin } from '../support/http.js';
import { testSettings } from '../support/service.js';
import type { FakeProvider } from '../federation/support/fakeProvider.js';
import { Browser, federationEnv, fixtureProject, startFakeProvider } from '../federation/support/harness.js';

const UI_URL = 'http://ui.example.test/signed-in?from=svc';

describe('logs at trace level carry no token', function () {
  this.timeout(60_000);
  let fake: FakeProvider;
  let service: Service;
  let admin: Admin;
  const lines: string[] = [];

  before(async () => {
    fake = await startFakeProvider();
    const port = await freePort();
    const settings = testSettings(await createTestDatabase(), federationEnv(fake, port, { SVC_OAUTH_UI_REDIRECT_URL: UI_URL }), fixtureProject(fake));
    service = await startService(settings, createLogger('trace', { write: (line: string) => void lines.push(line) }));
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  it('logs the OAuth callback and its redirect without the token, the code or the state', async () => {
    const browser = new Browser(service.url);
    fake.willSignIn({ sub: 'log-1', email: 'log@example.com', email_verified: true });
    const { callbackUrl, code, state } = await browser.startLogin('google');
    const result = await browser.finishLogin(callbackUrl);
    expect(result.status, JSON.stringify(result.body)).to.equal(302);
    const token = new URL(result.headers.get('location')!).searchParams.get('token')!;
    expect(token).to.have.length.above(20);
    expect(code).to.have.length.above(5);
    expect(state).to.have.length.above(5);

    // The lines are there (the test would prove nothing otherwise): the callback's request and its 302.
    const callbackLines = lines.filter((line) => line.includes('/auth/oauth/google/callback'));
    expect(callbackLines, lines.join('\n')).to.not.be.empty;
    const redirects = callbackLines
      .map((line) => JSON.parse(line) as { res?: { statusCode: number; headers: Record<string, string> } })
      .filter((entry) => entry.res?.statusCode === 302);
    expect(redirects, callbackLines.join('\n')).to.have.length(1);
    expect(redirects[0]!.res!.headers.location).to.match(/^http:\/\/ui\.example\.test\/signed-in\?/);
    expect(new URL(redirects[0]!.res!.headers.location!).searchParams.get('from')).to.equal('svc');
    for (const secret of [token, code, state]) {
      expect(
        lines.filter((line) => line.includes(secret)),
        `a log line carries ${secret.slice(0, 8)}...`,
      ).to.deep.equal([]);
    }
  });

  it('logs password logins, refreshes and URLs that name a token without any token', async () => {
    const loggedIn = await login(service.url, admin.email, admin.password);
    const refreshed = await call(service.url, 'POST', '/auth/refresh', { token: loggedIn });
    expect(refreshed.status).to.equal(200);
    const inUrl = 'a-token-in-the-url-0123456789';
    for (const name of ['token', 'access_token', 'id_token', 'refresh_token', 'Token']) {
      const answer = await call(service.url, 'GET', `/auth/me?${name}=${inUrl}&keep=visible`, { token: refreshed.body.access_token });
      expect(answer.status).to.equal(200);
    }
    expect(
      lines.some((line) => line.includes('/auth/me?') && line.includes('keep=visible')),
      'the URLs are logged',
    ).to.equal(true);
    for (const secret of [admin.token, loggedIn, refreshed.body.access_token as string, inUrl, admin.password]) {
      expect(
        lines.filter((line) => line.includes(secret)),
        `a log line carries ${secret.slice(0, 8)}...`,
      ).to.deep.equal([]);
    }
  });
});
