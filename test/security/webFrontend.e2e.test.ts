// ASVS 5.0 V3 Web Frontend Security, over every operation of the example project's /openapi.json: no
// answer sets a cookie (credentials are bearer headers a browser never attaches by itself), every answer
// has nosniff and a frame-ancestors policy, and no origin is allowed to read answers across origins.
import { expect } from 'chai';
import { hit, startSuite, sweep, type Answered, type Suite } from './routes.js';

describe('ASVS V3 Web Frontend Security', function () {
  this.timeout(60_000);
  let suite: Suite;
  let answered: Answered[];

  before(async function () {
    this.timeout(60_000);
    suite = await startSuite();
    answered = await sweep(suite);
    for (const url of ['/docs/', '/redoc', '/console', '/openapi.json', '/auth/jwks.json', '/health', '/no/such/page']) {
      const route = { method: 'GET', path: url, key: `get ${url}`, url, isPublic: true, scope: undefined, isDeploymentWide: false, hasBody: false };
      answered.push({ route, as: 'none', answer: await hit(suite.service.url, route) });
    }
  });
  after(async () => {
    await suite?.service.close();
  });

  it('V3.3.1 V3.3.4 no API answer sets a cookie (the one cookie, the OAuth binding cookie, is checked in test/federation/loginState)', () => {
    const withCookies = answered.filter(({ answer }) => answer.headers.get('set-cookie') !== null).map(({ route }) => route.key);
    expect(withCookies).to.deep.equal([]);
  });

  it('V3.4.4 every answer carries X-Content-Type-Options: nosniff', () => {
    const missing = answered.filter(({ answer }) => answer.headers.get('x-content-type-options') !== 'nosniff').map(({ route, as }) => `${route.key} [${as}]`);
    expect(missing).to.deep.equal([]);
  });

  it("V3.4.6 every answer has a CSP frame-ancestors directive: 'none' for the API, 'self' at most for the pages", () => {
    const wrong: string[] = [];
    for (const { route, as, answer } of answered) {
      const ancestors = /frame-ancestors ([^;]+)/.exec(answer.headers.get('content-security-policy') ?? '')?.[1]?.trim();
      const isPage = (answer.headers.get('content-type') ?? '').startsWith('text/html');
      if (ancestors !== "'none'" && !(isPage && ancestors === "'self'")) wrong.push(`${route.key} [${as}]: ${ancestors}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V3.4.2 V3.5.2 no origin is allowed by CORS: neither a request nor a preflight from another origin gets Access-Control-Allow-* headers', async () => {
    const origin = { origin: 'https://evil.example' };
    const plain = await hit(suite.service.url, { method: 'GET', url: '/auth/me' }, { token: suite.admin.token, headers: origin });
    expect(plain.status).to.equal(200);
    const preflight = await hit(
      suite.service.url,
      { method: 'OPTIONS', url: '/auth/admin/users' },
      { headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' } },
    );
    for (const answer of [plain, preflight]) {
      const allowed = [...answer.headers.keys()].filter((name) => name.startsWith('access-control-allow'));
      expect(allowed).to.deep.equal([]);
    }
  });
});
