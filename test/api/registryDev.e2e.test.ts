// GET /registry (iam:admin only) and the dev-mode routes: /dev/settings, /dev/token, /insight,
// absent outside dev mode, gated by the dev key and the IP allowlist.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, client, expectError, expectUnauthenticated, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { DEV_ENV, DEV_KEY, EXAMPLE_PROJECT, FIXTURE_PROJECT } from './helpers.js';

describe('GET /registry', () => {
  let service: Service;
  let admin: Admin;
  before(async () => {
    service = await startTestService({ projectDir: EXAMPLE_PROJECT });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('answers 401 without a token and 403 without iam:admin', async () => {
    expectUnauthenticated(await call(service.url, 'GET', '/registry'));
    const reader = await createUser(service.url, admin.token, 'reader@example.com', { readers: ['runs:read', 'artifacts:read', 'mcp:connect'] });
    expectError(await call(service.url, 'GET', '/registry', { token: reader.token }), 403, 'PERMISSION_DENIED');
  });

  it('lists the loaded workflows, models, artifacts and agent models with name, version and enabled', async () => {
    const registry = await call(service.url, 'GET', '/registry', { token: admin.token });
    expect(registry.status).to.equal(200);
    const { workflows, models, artifacts, agent_models: agentModels } = registry.body;
    const brief = (entries: any[]) => entries.map((e) => ({ name: e.name, version: e.version, enabled: e.enabled }));
    expect(brief(workflows)).to.have.deep.members(
      [
        'classify',
        'cool_off',
        'flaky_quote',
        'heartbeat',
        'hello',
        'one_at_a_time',
        'open_ticket',
        'refund',
        'service_status',
        'support_agent',
        'welcome',
        'what_time',
      ].map((name) => ({
        name,
        version: 'v1',
        enabled: true,
      })),
    );
    expect(brief(models)).to.have.deep.members([
      { name: 'Customer', version: 'v1', enabled: true },
      { name: 'Ticket', version: 'v1', enabled: true },
    ]);
    expect(brief(artifacts)).to.have.deep.members(
      ['clock_server', 'no_secrets', 'support_steering', 'triage_prompt'].map((name) => ({ name, version: '1', enabled: true })),
    );
    expect(brief(agentModels)).to.deep.equal([{ name: 'local', version: 'v1', enabled: true }]);
    // The example project configures no provider (federation/google.yaml.example is not loaded): the
    // built-ins exist anyway, without credentials (their routes answer 501).
    expect(registry.body.federation_providers).to.deep.equal(
      ['github', 'google', 'microsoft'].map((name) => ({ name, version: 'v1', enabled: true, provider: name, source: 'environment' })),
    );
  });

  it('follows toggles and uploads', async () => {
    const admin$ = client(service.url, admin.token);
    expect((await admin$.patch('/admin/workflows/refund/v1/toggle')).body.enabled).to.equal(false);
    const upload = await admin$.post('/api/artifacts', { name: 'greeting_prompt', type: 'prompt', content: 'Say hello.' });
    expect(upload.status, JSON.stringify(upload.body)).to.equal(201);
    try {
      const { body } = await admin$.get('/registry');
      expect(body.workflows.find((w: any) => w.name === 'refund')).to.deep.include({ version: 'v1', enabled: false });
      expect(body.workflows.find((w: any) => w.name === 'hello')).to.deep.include({ enabled: true });
      expect(body.artifacts.find((a: any) => a.name === 'greeting_prompt')).to.deep.include({ version: upload.body.version, enabled: true });
    } finally {
      expect((await admin$.patch('/admin/workflows/refund/v1/toggle')).body.enabled).to.equal(true);
    }
  });
});

describe('GET /registry with federation providers', () => {
  let service: Service;
  let admin: Admin;
  const providersOf = async () => {
    const registry = await call(service.url, 'GET', '/registry', { token: admin.token });
    expect(registry.status, JSON.stringify(registry.body)).to.equal(200);
    return registry.body.federation_providers as Record<string, unknown>[];
  };
  before(async () => {
    // fixture_idp.yaml (enabled) and retired_idp.yaml (enabled: false) in the fixture project, and
    // github from the SVC_OAUTH_GITHUB_* fallback.
    service = await startTestService({
      projectDir: FIXTURE_PROJECT,
      env: { SVC_OAUTH_GITHUB_CLIENT_ID: 'gh-client', SVC_OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret' },
    });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('lists each provider with its name, version and enabled flag, where it comes from, and no secret', async () => {
    const providers = await providersOf();
    expect(providers).to.deep.equal([
      { name: 'fixture_idp', version: 'v1', enabled: true, provider: 'custom', source: 'project' },
      { name: 'github', version: 'v1', enabled: true, provider: 'github', source: 'environment' },
      { name: 'google', version: 'v1', enabled: true, provider: 'google', source: 'environment' },
      { name: 'microsoft', version: 'v1', enabled: true, provider: 'microsoft', source: 'environment' },
      { name: 'retired_idp', version: 'v1', enabled: false, provider: 'custom', source: 'project' },
    ]);
    expect(JSON.stringify(providers)).to.not.include('gh-secret');
  });

  it('follows providers saved and deleted through the admin API', async () => {
    const admin$ = client(service.url, admin.token);
    const spec = {
      provider: 'custom',
      auth_url: 'https://idp.invalid/authorize',
      token_url: 'https://idp.invalid/token',
      userinfo_url: 'https://idp.invalid/userinfo',
    };
    expect((await admin$.put('/auth/admin/federation/fixture_idp', { enabled: false, spec })).status).to.equal(200);
    expect((await admin$.put('/auth/admin/federation/added_idp', { spec })).status).to.equal(200);
    try {
      const providers = await providersOf();
      expect(providers).to.deep.include({ name: 'fixture_idp', version: 'v1', enabled: false, provider: 'custom', source: 'admin' });
      expect(providers).to.deep.include({ name: 'added_idp', version: 'v1', enabled: true, provider: 'custom', source: 'admin' });
    } finally {
      expect((await admin$.delete('/auth/admin/federation/fixture_idp')).status).to.equal(204);
      expect((await admin$.delete('/auth/admin/federation/added_idp')).status).to.equal(204);
    }
    const restored = await providersOf();
    expect(restored.map((p) => p.name)).to.deep.equal(['fixture_idp', 'github', 'google', 'microsoft', 'retired_idp']);
    expect(restored[0]).to.deep.include({ enabled: true, source: 'project' });
  });
});

describe('dev-mode routes', () => {
  const SIGNING_KEY = '7c'.repeat(32);
  const OAUTH_SECRET = 'oauth-client-secret-value';
  const REDIS_PASSWORD = 'redis-password-value';
  let databaseUrl: string;
  const services: Service[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startTestService({ databaseUrl, projectDir: EXAMPLE_PROJECT, env });
    services.push(service);
    return service;
  };
  let dev: Service;
  let admin: Admin;

  before(async () => {
    databaseUrl = await createTestDatabase();
    dev = await start({
      ...DEV_ENV,
      SVC_SIGNING_KEY: SIGNING_KEY,
      SVC_OAUTH_GITHUB_CLIENT_ID: 'github-client-id',
      SVC_OAUTH_GITHUB_CLIENT_SECRET: OAUTH_SECRET,
      SVC_REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:6399/0`,
    });
    admin = await bootstrapAdmin(dev.url);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.close()));
  });

  it('are absent (404) without SVC_DEV_MODE, even with a dev key configured', async () => {
    const envs: Record<string, string>[] = [{}, { SVC_DEV_API_KEY: DEV_KEY }, { SVC_DEV_MODE: 'false', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: DEV_KEY }];
    for (const env of envs) {
      const plain = await start(env);
      for (const [method, path] of [
        ['GET', '/dev/settings'],
        ['POST', '/dev/token'],
        ['GET', '/insight'],
        ['GET', '/insight/api-docs'],
        ['GET', '/insight/runs'],
      ]) {
        const answer = await call(plain.url, method!, path!, { token: DEV_KEY, ...(method === 'POST' ? { json: { user_id: admin.userId } } : {}) });
        expect(answer.status, `${method} ${path} with ${JSON.stringify(env)}`).to.equal(404);
      }
    }
  });

  it("/dev/settings needs the dev key: no token, a wrong key and a JWT (even an admin's) are 401", async () => {
    expectUnauthenticated(await call(dev.url, 'GET', '/dev/settings'));
    expectUnauthenticated(await call(dev.url, 'GET', '/dev/settings', { token: 'ABCD-EFGH-IJKL-MNOQ' }));
    expectUnauthenticated(await call(dev.url, 'GET', '/dev/settings', { token: admin.token }));
    const settings = await call(dev.url, 'GET', '/dev/settings', { token: DEV_KEY });
    expect(settings.status, JSON.stringify(settings.body)).to.equal(200);
    expect(settings.body.projectDir).to.equal(EXAMPLE_PROJECT);
    expect(settings.body.dev).to.deep.include({ enabled: true, apiKey: '[set]' });
  });

  it('/dev/settings masks every secret', async () => {
    const settings = await call(dev.url, 'GET', '/dev/settings', { token: DEV_KEY });
    expect(settings.status).to.equal(200);
    const text = JSON.stringify(settings.body);
    const databasePassword = decodeURIComponent(new URL(databaseUrl).password);
    expect(databasePassword, 'the test database URL carries a password').to.not.equal('');
    for (const [what, secret] of [
      ['the dev key', DEV_KEY],
      ['the signing key', SIGNING_KEY],
      ['the OAuth client secret', OAUTH_SECRET],
      ['the Redis password', REDIS_PASSWORD],
      ['the database password', databasePassword],
    ]) {
      expect(text.includes(secret!), `${what} shows in /dev/settings: ${text}`).to.equal(false);
    }
    expect(settings.body.signing_key).to.equal('[set]');
    // Still useful: where the database and Redis are, without the credentials.
    expect(settings.body.databaseUrl).to.equal(databaseUrl.replace(`:${new URL(databaseUrl).password}@`, ':***@'));
    expect(settings.body.redisUrl).to.equal('redis://:***@127.0.0.1:6399/0');
  });

  it('POST /dev/token mints a working token for an existing user and 404 for an unknown one', async () => {
    const user = await createUser(dev.url, admin.token, 'tryout@example.com', { tryout: ['runs:read', 'mcp:connect'] });
    const minted = await call(dev.url, 'POST', '/dev/token', { token: DEV_KEY, json: { user_id: user.id } });
    expect(minted.status, JSON.stringify(minted.body)).to.equal(200);
    expect(minted.body).to.include({ token_type: 'bearer' });
    const me = await call(dev.url, 'GET', '/auth/me', { token: minted.body.access_token });
    expect(me.status).to.equal(200);
    expect(me.body).to.deep.include({ user_id: user.id, groups: ['tryout'] });
    expect(me.body.scopes).to.have.members(['runs:read', 'mcp:connect']);
    expect((await call(dev.url, 'GET', '/api/runs', { token: minted.body.access_token })).status).to.equal(200);

    expectError(await call(dev.url, 'POST', '/dev/token', { token: DEV_KEY, json: { user_id: '00000000-0000-4000-8000-000000000000' } }), 404, 'NOT_FOUND');
    expectUnauthenticated(await call(dev.url, 'POST', '/dev/token', { token: admin.token, json: { user_id: user.id } }));
    expect((await call(dev.url, 'POST', '/dev/token', { token: DEV_KEY, json: { user: user.id } })).status).to.equal(422);
  });

  it('/insight serves the console (every client route), with the svc-dev-key meta tag only under SVC_DEV_AUTO_LOGIN=1', async () => {
    const insightPaths = ['/insight', '/insight/', '/insight/runs', '/insight/runs/0190c3f0-0000-7000-8000-000000000000', '/insight/api-docs'];
    for (const path of insightPaths) {
      const page = await call(dev.url, 'GET', path);
      expect(page.status, path).to.equal(200);
      expect(page.headers.get('content-type'), path).to.match(/^text\/html/);
      const html = String(page.body);
      // The console's own build: the same index page as /console, its files under /console/assets.
      expect(html, path).to.equal(String((await call(dev.url, 'GET', '/console/')).body));
      expect(html, path).to.match(/<script type="module" crossorigin src="\/console\/assets\/[^"]+\.js"><\/script>/);
      expect(html, path).to.not.include('svc-dev-key');
      expect(html, path).to.not.include(DEV_KEY);
    }
    // The session the console makes of the raw dev key: the synthetic dev identity.
    const me = await call(dev.url, 'GET', '/auth/me', { token: DEV_KEY });
    expect(me.status, JSON.stringify(me.body)).to.equal(200);
    expect(me.body).to.deep.include({ groups: ['dev'], scopes: ['iam:admin'] });

    const auto = await start({ ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1' });
    for (const path of insightPaths) {
      const html = String((await call(auto.url, 'GET', path)).body);
      expect(html, path).to.include(`<meta name="svc-dev-key" content="${DEV_KEY}" />\n</head>`);
    }
    // /console never carries the key, auto-login or not.
    expect(String((await call(auto.url, 'GET', '/console/')).body)).to.not.include(DEV_KEY);
  });

  it('answers 403 to every dev route from an address outside SVC_DEV_IP_ALLOWLIST', async () => {
    const elsewhere = await start({ ...DEV_ENV, SVC_DEV_AUTO_LOGIN: '1', SVC_DEV_IP_ALLOWLIST: '10.9.9.9' });
    for (const [method, path] of [
      ['GET', '/dev/settings'],
      ['POST', '/dev/token'],
      ['GET', '/insight'],
      ['GET', '/insight/api-docs'],
      ['GET', '/insight/runs'],
    ]) {
      const answer = await call(elsewhere.url, method!, path!, { token: DEV_KEY, ...(method === 'POST' ? { json: { user_id: admin.userId } } : {}) });
      expectError(answer, 403, 'PERMISSION_DENIED');
      expect(JSON.stringify(answer.body)).to.not.include(DEV_KEY);
    }
    // The allowlist holding loopback lets the same requests through.
    const loopback = await start({ ...DEV_ENV, SVC_DEV_IP_ALLOWLIST: '10.9.9.9,127.0.0.1' });
    expect((await call(loopback.url, 'GET', '/dev/settings', { token: DEV_KEY })).status).to.equal(200);
    expect((await call(loopback.url, 'GET', '/insight')).status).to.equal(200);
  });
});
