// Who administers which tenant (SVC_TENANT_IDS): a tenant admin (iam:admin without the superadmin
// group) administers the users of its own tenant who do not hold superadmin, and nothing
// deployment-wide; a deployment admin (iam:admin and superadmin) administers everything.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectError, login, payloadOf, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, roleId, USER_PASSWORD, type SignedInUser } from '../support/users.js';
import { ENGINE_PROJECT, SIGNING_KEY } from '../workflows/helpers.js';

const DEPLOYMENT_ONLY = /deployment admin/;

describe('IAM in a multi-tenant deployment: tenant admins and deployment admins', function () {
  this.timeout(60_000);
  let service: Service;
  /** The bootstrap user: tenant t1, superadmin, so a deployment admin. */
  let root: Admin;
  /** iam:admin through the role tenant_admin, tenant t1: a tenant admin. */
  let ta1: SignedInUser;
  let t1User: SignedInUser;
  let t2User: SignedInUser;
  let t2Run: string;
  let superadminRole: string;
  let runnerRole: string;

  const asTa1 = () => client(service.url, ta1.token);
  const asRoot = () => client(service.url, root.token);
  const emailsListedFor = async (token: string) =>
    ((await client(service.url, token).get('/auth/admin/users')).body as { email: string }[]).map((u) => u.email);

  before(async () => {
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_TENANT_IDS: 't1,t2', SVC_SIGNING_KEY: SIGNING_KEY } });
    root = await bootstrapAdmin(service.url);
    ta1 = await createUser(service.url, root.token, 'ta1@t1.example', { tenant_admin: ['iam:admin'] }, { tenant: 't1' });
    t1User = await createUser(service.url, root.token, 'una@t1.example', {}, { tenant: 't1' });
    t2User = await createUser(service.url, root.token, 'tom@t2.example', { runner: ['runs:read'] }, { tenant: 't2' });
    superadminRole = await roleId(service.url, root.token, 'superadmin');
    runnerRole = await roleId(service.url, root.token, 'runner');
    const run = await call(service.url, 'POST', '/api/wf/route', { token: t2User.token, json: { want: 'jump' } });
    expect(run.status, JSON.stringify(run.body)).to.equal(201);
    t2Run = run.headers.get('x-svc-run-id')!;
  });
  after(async () => {
    await service?.close();
  });

  it('the escape of issue 15: a t1 tenant admin can neither place a user in t2 nor make anyone superadmin', async () => {
    const inT2 = await asTa1().post('/auth/admin/users', { email: 'mallory@t2.example', password: USER_PASSWORD, tenant: 't2' });
    expectError(inT2, 403, 'PERMISSION_DENIED');
    expect(inT2.body.detail).to.match(/tenant t1/);
    expect(await emailsListedFor(root.token), 'nothing was created').to.not.include('mallory@t2.example');

    const own = await asTa1().post('/auth/admin/users', { email: 'mallory@t1.example', password: USER_PASSWORD });
    expect(own.status, JSON.stringify(own.body)).to.equal(201);
    expect(own.body.tenant, 'a tenant admin creates users in its own tenant').to.equal('t1');
    expect((await asTa1().post('/auth/admin/users', { email: 'mallory2@t1.example', password: USER_PASSWORD, tenant: 't1' })).status).to.equal(201);
    const promoted = await asTa1().post(`/auth/admin/users/${own.body.id}/roles/${superadminRole}`);
    expectError(promoted, 403, 'PERMISSION_DENIED');
    expect(promoted.body.detail)
      .to.match(/superadmin/)
      .and.match(DEPLOYMENT_ONLY);

    const token = await login(service.url, 'mallory@t1.example', USER_PASSWORD);
    expect(payloadOf(token)).to.include({ tenant: 't1' });
    expect(payloadOf(token).groups).to.deep.equal([]);
    expect((await call(service.url, 'GET', `/api/runs/${t2Run}`, { token })).status).to.equal(404);
    expect((await call(service.url, 'GET', `/api/runs/${t2Run}`, { token: ta1.token })).status, 'data stays per tenant').to.equal(404);
  });

  it('lists only its own tenant’s users that do not hold superadmin', async () => {
    const listed = await emailsListedFor(ta1.token);
    expect(listed).to.include.members(['ta1@t1.example', 'una@t1.example']);
    expect(listed).to.not.include.members([root.email, 'tom@t2.example']);
    expect(await emailsListedFor(root.token), 'a deployment admin lists everyone').to.include.members([root.email, 'ta1@t1.example', 'tom@t2.example']);
  });

  it('answers 404 for another tenant’s user and for a superadmin on every user route', async () => {
    for (const target of [t2User.id, root.userId]) {
      const routes: [string, string, unknown?][] = [
        ['GET', `/auth/admin/users/${target}`],
        ['PATCH', `/auth/admin/users/${target}`, { password: 'taken-over-password' }],
        ['DELETE', `/auth/admin/users/${target}`],
        ['POST', `/auth/admin/users/${target}/roles/${runnerRole}`],
        ['DELETE', `/auth/admin/users/${target}/roles/${runnerRole}`],
      ];
      for (const [method, path, json] of routes) {
        const result = await call(service.url, method, path, { token: ta1.token, ...(json !== undefined ? { json } : {}) });
        expectError(result, 404, 'NOT_FOUND');
        expect(result.body.detail, `${method} ${path}`).to.equal(`User ${target} not found`);
      }
    }
    // Nothing changed: the superadmin still signs in with its password, the t2 user still holds its role.
    expect(payloadOf(await login(service.url, root.email, root.password)).groups).to.deep.equal(['superadmin']);
    expect((await asRoot().get(`/auth/admin/users/${t2User.id}`)).body.roles.map((r: { name: string }) => r.name)).to.deep.equal(['runner']);
  });

  it('administers its own tenant’s users: update, non-superadmin roles, delete', async () => {
    const id = t1User.id;
    const updated = await asTa1().patch(`/auth/admin/users/${id}`, { phone_number: '+15550142' });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    expect((await asTa1().get(`/auth/admin/users/${id}`)).body.phone_number).to.equal('+15550142');
    expect((await asTa1().post(`/auth/admin/users/${id}/roles/${runnerRole}`)).status).to.equal(200);
    expect((await asTa1().delete(`/auth/admin/users/${id}/roles/${runnerRole}`)).status).to.equal(200);
    expectError(await asTa1().delete(`/auth/admin/users/${id}/roles/${superadminRole}`), 403, 'PERMISSION_DENIED');
    expect((await asTa1().get('/auth/admin/roles')).status, 'it may list roles').to.equal(200);
    const doomed = await asTa1().post('/auth/admin/users', { email: 'temp@t1.example', password: USER_PASSWORD });
    expect((await asTa1().delete(`/auth/admin/users/${doomed.body.id}`)).status).to.equal(204);
  });

  it('refuses a tenant admin everything deployment-wide with 403: roles, federation, version admin, registry', async () => {
    const routes: [string, string, unknown?][] = [
      ['POST', '/auth/admin/roles', { name: 'sneaky', scopes: ['iam:admin'] }],
      ['DELETE', `/auth/admin/roles/${superadminRole}`],
      ['PATCH', `/auth/admin/roles/${runnerRole}/scopes`, { add: ['iam:admin'] }],
      ['GET', '/auth/admin/federation'],
      ['GET', '/auth/admin/federation/google'],
      [
        'PUT',
        '/auth/admin/federation/evil',
        { spec: { provider: 'custom', client_id: 'x', client_secret: 'y', auth_url: 'https://evil.example/a', token_url: 'https://evil.example/t' } },
      ],
      ['DELETE', '/auth/admin/federation/evil'],
      ['GET', '/admin/workflows'],
      ['PATCH', '/admin/workflows/route/v1/toggle'],
      ['POST', '/admin/workflows/route/v1/fork', { new_version: 'v9' }],
      ['GET', '/admin/models'],
      ['PATCH', '/admin/models/Note/v1/toggle'],
      ['POST', '/admin/models/Note/v1/fork', { new_version: 'v9' }],
      ['GET', '/admin/scopes'],
      ['GET', '/registry'],
    ];
    for (const [method, path, json] of routes) {
      const result = await call(service.url, method, path, { token: ta1.token, ...(json !== undefined ? { json } : {}) });
      expectError(result, 403, 'PERMISSION_DENIED');
      expect(result.body.detail, `${method} ${path}`).to.match(DEPLOYMENT_ONLY);
    }
    expect(((await asRoot().get('/auth/admin/roles')).body as { name: string }[]).map((r) => r.name)).to.not.include('sneaky');
    expect(((await asRoot().get('/auth/admin/roles')).body as { id: string; scopes: string[] }[]).find((r) => r.id === runnerRole)!.scopes).to.deep.equal([
      'runs:read',
    ]);
    expect((await asRoot().get('/admin/workflows')).body.route[0].enabled, 'the toggle did not happen').to.equal(true);
  });

  it('a deployment admin administers every tenant: users anywhere, superadmin, roles, deployment settings', async () => {
    const inT2 = await asRoot().post('/auth/admin/users', { email: 'ops@t2.example', password: USER_PASSWORD, tenant: 't2' });
    expect(inT2.status, JSON.stringify(inT2.body)).to.equal(201);
    expect(inT2.body.tenant).to.equal('t2');
    expect((await asRoot().post(`/auth/admin/users/${inT2.body.id}/roles/${superadminRole}`)).status).to.equal(200);
    expect((await asRoot().patch(`/auth/admin/users/${t2User.id}`, { phone_number: '+15550199' })).status).to.equal(200);
    const role = await asRoot().post('/auth/admin/roles', { name: 'auditor', scopes: ['runs:read'] });
    expect(role.status).to.equal(201);
    expect((await asRoot().delete(`/auth/admin/roles/${role.body.id}`)).status).to.equal(204);
    for (const path of ['/auth/admin/federation', '/admin/workflows', '/admin/scopes', '/registry'])
      expect((await asRoot().get(path)).status, path).to.equal(200);
    // The new superadmin of t2 is a deployment admin too, though it reads t2's data only.
    const t2Root = await login(service.url, 'ops@t2.example', USER_PASSWORD);
    expect((await client(service.url, t2Root).get('/admin/scopes')).status).to.equal(200);
    expect((await client(service.url, t2Root).get(`/api/runs/${t2Run}`)).status).to.equal(200);
  });
});

describe('IAM without SVC_TENANT_IDS: every iam:admin administers everything (unchanged)', function () {
  this.timeout(30_000);
  let service: Service;

  before(async () => {
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
  });
  after(async () => {
    await service?.close();
  });

  it('an iam:admin without the superadmin group manages roles, superadmin, every user and the deployment settings', async () => {
    const root = await bootstrapAdmin(service.url);
    const ops = await signInAsOps(service.url, root.token);
    const api = client(service.url, ops);
    const role = await api.post('/auth/admin/roles', { name: 'auditor', scopes: ['runs:read'] });
    expect(role.status, JSON.stringify(role.body)).to.equal(201);
    expect((await api.patch(`/auth/admin/roles/${role.body.id}/scopes`, { add: ['iam:admin'] })).status).to.equal(200);
    expect((await api.get(`/auth/admin/users/${root.userId}`)).status).to.equal(200);
    const created = await api.post('/auth/admin/users', { email: 'new@example.com', password: USER_PASSWORD });
    expect((await api.post(`/auth/admin/users/${created.body.id}/roles/${await roleId(service.url, root.token, 'superadmin')}`)).status).to.equal(200);
    for (const path of ['/auth/admin/federation', '/admin/workflows', '/admin/scopes', '/registry']) expect((await api.get(path)).status, path).to.equal(200);
  });
});

/** A user holding only the role `ops` (scope iam:admin), signed in. */
async function signInAsOps(baseUrl: string, rootToken: string): Promise<string> {
  const created = await client(baseUrl, rootToken).post('/auth/admin/users', { email: 'ops@example.com', password: USER_PASSWORD });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  expect(
    (await client(baseUrl, rootToken).post(`/auth/admin/users/${created.body.id}/roles/${await roleId(baseUrl, rootToken, 'ops', ['iam:admin'])}`)).status,
  ).to.equal(200);
  return login(baseUrl, 'ops@example.com', USER_PASSWORD);
}
