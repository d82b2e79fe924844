// Federation under the destination policy, in production: saving a provider refuses metadata and loopback
// endpoints (400), and the token, JWKS and userinfo requests of a login go through the same guard.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import type { FakeProvider } from './support/fakeProvider.js';
import { Browser, CLIENTS, eventsOfStream, startFakeProvider, signInOk } from './support/harness.js';

const SIGNING_KEY = '4d'.repeat(32);

/** A project whose providers name the fake by `host` (a name or an address) for each endpoint. */
function providersProject(fake: FakeProvider, hosts: { token: string; jwks: string; userinfo: string }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-federation-outbound-'));
  mkdirSync(path.join(dir, 'federation'));
  const at = (host: string, endpoint: string) => `http://${host}:${fake.port}/${endpoint}`;
  writeFileSync(
    path.join(dir, 'federation', 'corp.yaml'),
    [
      'kind: FederationProvider',
      'version: v1',
      'metadata: {name: corp}',
      'spec:',
      '  provider: custom',
      `  client_id: ${CLIENTS.corp.id}`,
      `  client_secret: ${CLIENTS.corp.secret}`,
      `  auth_url: ${at('127.0.0.1', 'authorize')}`,
      `  token_url: ${at(hosts.token, 'token')}`,
      `  issuer: ${fake.url}`,
      `  jwks_url: ${at(hosts.jwks, 'jwks')}`,
      '  scope: openid email',
      '',
    ].join('\n'),
  );
  writeFileSync(
    path.join(dir, 'federation', 'acme.yaml'),
    [
      'kind: FederationProvider',
      'version: v1',
      'metadata: {name: acme}',
      'spec:',
      '  provider: custom',
      `  client_id: ${CLIENTS.acme.id}`,
      `  client_secret: ${CLIENTS.acme.secret}`,
      `  auth_url: ${at('127.0.0.1', 'authorize')}`,
      `  token_url: ${at(hosts.token, 'token')}`,
      `  userinfo_url: ${at(hosts.userinfo, 'userinfo')}`,
      '  scope: profile email',
      '',
    ].join('\n'),
  );
  return dir;
}

async function startProduction(projectDir: string, extra: Record<string, string> = {}): Promise<Service> {
  const port = await freePort();
  return startTestService({
    projectDir,
    env: { SVC_ENV: 'production', SVC_SIGNING_KEY: SIGNING_KEY, PORT: String(port), SVC_OAUTH_BASE_URL: `http://127.0.0.1:${port}`, ...extra },
  });
}

describe('federation under the destination policy (production)', () => {
  let fake: FakeProvider;
  const services: Service[] = [];
  before(async () => {
    fake = await startFakeProvider();
  });
  after(async () => {
    for (const service of services) await service.close();
    await fake?.stop();
  });
  const start = async (projectDir: string, extra: Record<string, string> = {}) => {
    const service = await startProduction(projectDir, extra);
    services.push(service);
    return service;
  };

  it('PUT refuses endpoints on the metadata address, loopback (any spelling, or a name resolving there) and private ranges, naming the host', async () => {
    const service = await start(providersProject(fake, { token: '127.0.0.1', jwks: '127.0.0.1', userinfo: '127.0.0.1' }));
    const api = client(service.url, (await bootstrapAdmin(service.url)).token);
    const cases: [Record<string, string>, RegExp][] = [
      [{ token_url: 'https://169.254.169.254/latest/meta-data/iam/token' }, /token_url.*169\.254\.169\.254.*link-local/],
      [{ userinfo_url: 'https://169.254.169.254/userinfo' }, /userinfo_url.*169\.254\.169\.254.*link-local/],
      [{ token_url: 'https://10.0.0.7/token' }, /token_url.*10\.0\.0\.7.*private/],
      [{ token_url: 'https://[::1]/token' }, /token_url.*::1.*loopback/],
      [{ token_url: 'https://2130706433/token' }, /token_url.*127\.0\.0\.1.*loopback/],
      [{ token_url: 'https://localhost/token' }, /token_url.*localhost.*loopback/],
      [{ jwks_url: 'https://[::ffff:127.0.0.1]/jwks', issuer: 'https://idp.example.com' }, /jwks_url.*loopback/],
    ];
    for (const [endpoints, detail] of cases) {
      const spec = {
        provider: 'custom',
        client_id: 'c',
        client_secret: 's',
        auth_url: 'https://idp.example.com/authorize',
        token_url: 'https://idp.example.com/token',
        userinfo_url: 'https://idp.example.com/userinfo',
        ...endpoints,
      };
      const put = await api.put('/auth/admin/federation/internal', { spec });
      expectError(put, 400, 'BAD_REQUEST');
      expect(put.body.detail, JSON.stringify(endpoints)).to.match(detail);
      expect(put.body.detail).to.match(/SVC_OUTBOUND_ALLOW/);
    }
    const loopback = {
      provider: 'custom',
      client_id: 'c',
      client_secret: 's',
      auth_url: `${fake.url}/authorize`,
      token_url: `${fake.url}/token`,
      userinfo_url: `${fake.url}/userinfo`,
    };
    const put = await api.put('/auth/admin/federation/internal', { spec: loopback });
    expectError(put, 400, 'BAD_REQUEST');
    expect(put.body.detail).to.match(/127\.0\.0\.1.*loopback/);
    expect(await eventsOfStream(service.kernel.pool, 'federation-internal')).to.deep.equal([]);
  });

  it('PUT accepts what SVC_OUTBOUND_ALLOW names, and the login through it works end to end', async () => {
    const service = await start(providersProject(fake, { token: '127.0.0.1', jwks: '127.0.0.1', userinfo: '127.0.0.1' }), {
      SVC_OUTBOUND_ALLOW: `127.0.0.1:${fake.port}`,
    });
    const api = client(service.url, (await bootstrapAdmin(service.url)).token);
    fake.addClient('allowed-client', 'allowed-secret');
    const put = await api.put('/auth/admin/federation/allowed', {
      spec: {
        provider: 'custom',
        client_id: 'allowed-client',
        client_secret: 'allowed-secret',
        auth_url: `${fake.url}/authorize`,
        token_url: `${fake.url}/token`,
        issuer: fake.url,
        jwks_url: `${fake.url}/jwks`,
        scope: 'openid email',
      },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    await signInOk(service, fake, 'allowed', { sub: 'allowed-1', email: 'a1@allowed.example', email_verified: true });
    await signInOk(service, fake, 'corp', { sub: 'corp-1', email: 'c1@corp.example', email_verified: true });
    await signInOk(service, fake, 'acme', { sub: 'acme-1', email: 'a1@acme.example', email_verified: true });
  });

  it('the token request of a login is refused towards loopback (503 naming the host), and never reaches it', async () => {
    const service = await start(providersProject(fake, { token: 'localhost', jwks: 'localhost', userinfo: 'localhost' }));
    const before = fake.tokenRequests.length;
    fake.willSignIn({ sub: 'nobody', email: 'nobody@corp.example', email_verified: true });
    const result = await new Browser(service.url).signIn('corp');
    expectError(result, 503, 'UNAVAILABLE');
    expect(result.body.detail).to.match(/localhost.*loopback/);
    expect(fake.tokenRequests.length).to.equal(before);
  });

  it('the JWKS and userinfo requests go through the guard too: allowed token endpoint, refused key set or profile', async () => {
    const service = await start(providersProject(fake, { token: 'localhost', jwks: '127.0.0.1', userinfo: '127.0.0.1' }), {
      SVC_OUTBOUND_ALLOW: `localhost:${fake.port}`,
    });
    fake.willSignIn({ sub: 'corp-2', email: 'c2@corp.example', email_verified: true });
    const oidc = await new Browser(service.url).signIn('corp');
    expectError(oidc, 503, 'UNAVAILABLE');
    expect(oidc.body.detail).to.match(new RegExp(`127\\.0\\.0\\.1:${fake.port}.*loopback`));
    expect(fake.tokenRequests.at(-1)!.outcome).to.equal('issued');

    fake.willSignIn({ sub: 'acme-2', email: 'a2@acme.example', email_verified: true });
    const plain = await new Browser(service.url).signIn('acme');
    expectError(plain, 503, 'UNAVAILABLE');
    expect(plain.body.detail).to.match(new RegExp(`127\\.0\\.0\\.1:${fake.port}.*loopback`));
  });
});
