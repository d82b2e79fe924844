// Federation secrets stay where secrets go: `${VAR}` only in client_id/client_secret, a secret never in
// client_id (redirects publish it), and a provider's endpoints all https or all on loopback.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import type { FakeProvider } from './support/fakeProvider.js';
import { CLIENTS, eventsOfStream, fetchManual, startFakeProvider, startFederationService } from './support/harness.js';

/** A project folder holding one federation/<name>.yaml with this text. */
function projectWith(name: string, yaml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-federation-secrets-'));
  mkdirSync(path.join(dir, 'federation'));
  writeFileSync(path.join(dir, 'federation', `${name}.yaml`), yaml);
  return dir;
}

/** The boot error of a service on this project; fails the test when it boots. */
async function bootError(projectDir: string, env: Record<string, string> = {}): Promise<string> {
  let service: Service | undefined;
  try {
    service = await startTestService({ databaseUrl: await createTestDatabase(), projectDir, env });
  } catch (error) {
    return (error as Error).message;
  }
  await service.close();
  return expect.fail('the service booted');
}

describe('federation secrets and endpoint schemes', () => {
  let fake: FakeProvider;
  let service: Service;
  let api: ReturnType<typeof client>;
  before(async () => {
    fake = await startFakeProvider();
    service = await startFederationService(fake);
    api = client(service.url, (await bootstrapAdmin(service.url)).token);
  });
  after(async () => {
    await service?.close();
    await fake?.stop();
  });

  const document = (name: string, spec: Record<string, unknown>) => ({
    kind: 'FederationProvider',
    version: 'v1',
    metadata: { name },
    enabled: true,
    spec: {
      provider: 'custom',
      client_id: 'leaky-client',
      client_secret: 'leaky-secret',
      auth_url: `${fake.url}/authorize`,
      token_url: `${fake.url}/token`,
      userinfo_url: `${fake.url}/userinfo`,
      ...spec,
    },
  });

  /** PUT must answer 400 naming `field`, store nothing, and /start must never publish the secret. */
  async function expectRefused(name: string, spec: Record<string, unknown>, detail: RegExp): Promise<void> {
    const put = await api.put(`/auth/admin/federation/${name}`, document(name, spec));
    expectError(put, 400, 'BAD_REQUEST');
    expect(put.body.detail).to.match(detail);
    expect(await eventsOfStream(service.kernel.pool, `federation-${name}`)).to.deep.equal([]);
    const start = await fetchManual(`${service.url}/auth/oauth/${name}/start`);
    expect(start.status).to.equal(404);
    expect(JSON.stringify(start.body) + (start.headers.get('location') ?? '')).to.not.include(CLIENTS.github.secret);
  }

  it('PUT refuses ${VAR} in any field but client_id and client_secret: an anonymous /start redirect never carries a secret', async () => {
    const secret = '${SVC_OAUTH_GITHUB_CLIENT_SECRET}';
    await expectRefused('leak_auth', { auth_url: `${fake.url}/authorize?x=${secret}` }, /auth_url.*client_id and client_secret/);
    await expectRefused('leak_scope', { scope: `openid ${secret}` }, /scope.*client_id and client_secret/);
    await expectRefused('leak_domains', { allowed_domains: [secret] }, /allowed_domains.*client_id and client_secret/);
  });

  it('PUT refuses a secret variable in client_id, which every redirect publishes; client_id may name *_ID variables', async () => {
    await expectRefused('leak_id', { client_id: '${SVC_OAUTH_GITHUB_CLIENT_SECRET}' }, /client_id.*SVC_OAUTH_GITHUB_CLIENT_SECRET.*_ID/);
    const ok = await api.put(
      '/auth/admin/federation/named_id',
      document('named_id', { client_id: '${SVC_OAUTH_GITHUB_CLIENT_ID}', client_secret: '${SVC_OAUTH_GITHUB_CLIENT_SECRET}' }),
    );
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    const start = await fetchManual(`${service.url}/auth/oauth/named_id/start`);
    expect(start.status).to.equal(302);
    const location = new URL(start.headers.get('location')!);
    expect(location.searchParams.get('client_id')).to.equal(CLIENTS.github.id);
    expect(location.toString()).to.not.include(CLIENTS.github.secret);
  });

  it('PUT refuses plain http on an endpoint off loopback, and a provider mixing loopback http with https', async () => {
    await expectRefused('plain_token', { token_url: 'http://idp.example.com/token' }, /token_url.*https/);
    await expectRefused('plain_userinfo', { userinfo_url: 'http://idp.example.com/userinfo' }, /userinfo_url.*https/);
    await expectRefused(
      'mixed',
      { auth_url: `${fake.url}/authorize`, token_url: 'https://idp.example.com/token', userinfo_url: 'https://idp.example.com/userinfo' },
      /auth_url.*https/,
    );
    const secure = await api.put(
      '/auth/admin/federation/secure',
      document('secure', {
        auth_url: 'https://idp.example.com/authorize',
        token_url: 'https://idp.example.com/token',
        userinfo_url: 'https://idp.example.com/userinfo',
      }),
    );
    expect(secure.status, JSON.stringify(secure.body)).to.equal(200);
  });

  it('refuses to boot on a project file with ${VAR} outside the credentials, naming the file', async () => {
    const dir = projectWith(
      'leaky',
      [
        'kind: FederationProvider',
        'version: v1',
        'metadata: {name: leaky}',
        'spec:',
        '  provider: custom',
        '  client_id: leaky-client',
        '  client_secret: ${LEAKY_CLIENT_SECRET}',
        '  auth_url: https://idp.example.com/authorize?secret=${LEAKY_CLIENT_SECRET}',
        '  token_url: https://idp.example.com/token',
        '  userinfo_url: https://idp.example.com/userinfo',
        '',
      ].join('\n'),
    );
    const message = await bootError(dir, { LEAKY_CLIENT_SECRET: 'do-not-publish' });
    expect(message).to.match(/federation\/leaky\.yaml.*auth_url.*client_id and client_secret/);
    expect(message).to.not.include('do-not-publish');
  });

  it('refuses to boot on a project file whose endpoints are not all https (nor all on loopback), naming the file', async () => {
    const dir = projectWith(
      'mixed',
      [
        'kind: FederationProvider',
        'version: v1',
        'metadata: {name: mixed}',
        'spec:',
        '  provider: custom',
        '  client_id: mixed-client',
        '  client_secret: mixed-secret',
        '  auth_url: http://127.0.0.1:9/authorize',
        '  token_url: http://idp.example.com/token',
        '  userinfo_url: https://idp.example.com/userinfo',
        '',
      ].join('\n'),
    );
    expect(await bootError(dir)).to.match(/federation\/mixed\.yaml.*token_url.*https/);
  });

  it('a built-in provider whose userinfo default is https cannot be pointed at loopback for only some endpoints', async () => {
    const dir = projectWith(
      'microsoft',
      [
        'kind: FederationProvider',
        'version: v1',
        'metadata: {name: microsoft}',
        'spec:',
        '  provider: microsoft',
        '  client_id: ms-client',
        '  client_secret: ms-secret',
        '  token_url: http://127.0.0.1:9/token',
        '',
      ].join('\n'),
    );
    expect(await bootError(dir)).to.match(/federation\/microsoft\.yaml.*token_url.*https/);
  });
});
