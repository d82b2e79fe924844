// ASVS 5.0 V8 Authorization, in a multi-tenant deployment (SVC_TENANT_IDS=t1,t2) of the example project:
// every scoped route refuses a principal without its scope, every deployment-wide route refuses a tenant
// admin, and a principal of t2 never reads or acts on t1's runs (journal, stream, export, control), audit
// events or users. Records, artifacts and approvals across tenants: see docs/SECURITY.md (their own tests).
import { expect } from 'chai';
import { client, expectError } from '../support/http.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { hit, routesOf, startSuite, type Suite } from './routes.js';

describe('ASVS V8 Authorization (two tenants)', function () {
  this.timeout(60_000);
  let suite: Suite;
  let t1User: SignedInUser;
  let t2User: SignedInUser;
  let t2Admin: SignedInUser;
  let t2Auditor: SignedInUser;
  let noScopes: SignedInUser;
  let runId: string;

  before(async function () {
    this.timeout(60_000);
    suite = await startSuite({ env: { SVC_TENANT_IDS: 't1,t2' } });
    const { url } = suite.service;
    const all = ['runs:read', 'runs:control', 'approvals:decide', 'artifacts:read'];
    t1User = await createUser(url, suite.admin.token, 'ann@t1.example', { operators: all }, { tenant: 't1' });
    t2User = await createUser(url, suite.admin.token, 'bob@t2.example', { operators: all }, { tenant: 't2' });
    t2Admin = await createUser(url, suite.admin.token, 'ada@t2.example', { tenant_admins: ['iam:admin'] }, { tenant: 't2' });
    t2Auditor = await createUser(url, suite.admin.token, 'aud@t2.example', { auditors: ['audit:read'] }, { tenant: 't2' });
    noScopes = await createUser(url, suite.admin.token, 'nobody@t1.example', {}, { tenant: 't1' });
    const run = await client(url, t1User.token).post('/api/hello?wait=true', { name: 'secret-of-t1', values: [1] });
    expect(run.status, JSON.stringify(run.body)).to.equal(201);
    runId = run.headers.get('x-svc-run-id')!;
  });
  after(async () => {
    await suite?.service.close();
  });

  it('V8.2.1 every operation of /openapi.json that documents a scope refuses a signed-in principal without it (403)', async () => {
    const scoped = routesOf(suite.doc, { id: runId }).filter((route) => route.scope !== undefined);
    expect(scoped.length).to.be.greaterThan(30);
    const wrong: string[] = [];
    for (const route of scoped) {
      const answer = await hit(suite.service.url, route, { token: noScopes.token, ...(route.hasBody ? { body: '{}' } : {}) });
      if (answer.status !== 403 || answer.body?.code !== 'PERMISSION_DENIED') wrong.push(`${route.key} (${route.scope}): ${answer.status} ${answer.text}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V8.4.1 every deployment-wide operation (roles, federation, versions, schedules, registry, audit log, erasure, holds) refuses a tenant admin (403)', async () => {
    const wide = routesOf(suite.doc, { id: runId, user_id: t1User.id, name: 'hello', version: 'v1' }).filter((route) => route.isDeploymentWide);
    for (const family of [
      '/auth/admin/roles',
      '/auth/admin/federation',
      '/admin/workflows',
      '/admin/schedules',
      '/admin/events',
      '/admin/audit/',
      '/admin/erasure',
      '/admin/retention',
    ]) {
      expect(
        wide.some((route) => route.path.startsWith(family)),
        family,
      ).to.equal(true);
    }
    const wrong: string[] = [];
    for (const route of wide) {
      const answer = await hit(suite.service.url, route, { token: t2Admin.token, ...(route.hasBody ? { body: '{}' } : {}) });
      if (answer.status !== 403) wrong.push(`${route.key}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V8.4.1 a tenant admin or an audit:read holder of t2 reads no event of t1 (the log spans every tenant: deployment admins only)', async () => {
    for (const token of [t2Admin.token, t2Auditor.token]) {
      for (const path of ['/admin/events', '/admin/events/stream', '/admin/audit/verify', '/admin/audit/checkpoints']) {
        const answer = await hit(suite.service.url, { method: 'GET', url: path }, { token });
        expect(answer.status, `${path}: ${answer.text}`).to.equal(403);
        expect(answer.text).to.not.include('secret-of-t1');
      }
    }
    // The deployment admin still reads the whole log, t1's run included.
    const page = await client(suite.service.url, suite.admin.token).get(`/admin/events?actor=${t1User.id}&limit=1000`);
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    expect(JSON.stringify(page.body)).to.include('secret-of-t1');
  });

  it('V8.4.1 a tenant admin of t2 neither erases a user of t1 nor holds or releases a run of t1', async () => {
    const admin2 = client(suite.service.url, t2Admin.token);
    expectError(await admin2.post('/admin/erasure', { subject_type: 'user', id: t1User.id }), 403, 'PERMISSION_DENIED');
    expectError(await admin2.post(`/admin/runs/${runId}/hold`, {}), 403, 'PERMISSION_DENIED');
    expectError(await admin2.delete(`/admin/runs/${runId}/hold`), 403, 'PERMISSION_DENIED');
    const me = await client(suite.service.url, suite.admin.token).get(`/auth/admin/users/${t1User.id}`);
    expect(me.body.email).to.equal('ann@t1.example');
  });

  it("V8.2.2 V8.4.1 a principal of t2, with every run scope or iam:admin, gets the 404 of an unknown run for t1's run on every run route", async () => {
    const routes = routesOf(suite.doc, { id: runId }).filter((route) => route.path.startsWith('/api/runs/{id}'));
    expect(routes.map((route) => route.path)).to.include.members(['/api/runs/{id}', '/api/runs/{id}/events', '/api/runs/{id}/export', '/api/runs/{id}/abort']);
    for (const token of [t2User.token, t2Admin.token]) {
      for (const route of routes) {
        const answer = await hit(suite.service.url, route, { token, ...(route.hasBody ? { body: '{}' } : {}), headers: { accept: 'text/event-stream' } });
        expect(answer.status, `${route.key}: ${answer.text}`).to.equal(404);
        expect(answer.text).to.not.include('secret-of-t1');
      }
      const listed = await client(suite.service.url, token).get('/api/runs');
      expect(JSON.stringify(listed.body)).to.not.include(runId);
    }
    // Untouched: t1 still reads its run, which nobody aborted.
    const still = await client(suite.service.url, t1User.token).get(`/api/runs/${runId}`);
    expect(still.body.status).to.equal('completed');
  });

  it('V8.2.2 another user of the same tenant gets the 404 of an unknown run, also on its event stream', async () => {
    const other = await createUser(suite.service.url, suite.admin.token, 'cat@t1.example', { operators: ['runs:read'] }, { tenant: 't1' });
    for (const url of [`/api/runs/${runId}`, `/api/runs/${runId}/events`, `/api/runs/${runId}/export`]) {
      const answer = await hit(suite.service.url, { method: 'GET', url }, { token: other.token, headers: { accept: 'text/event-stream' } });
      expect(answer.status, `${url}: ${answer.text}`).to.equal(404);
    }
  });

  it('V8.4.1 a tenant admin of t2 neither sees nor changes a user of t1 (404)', async () => {
    const admin2 = client(suite.service.url, t2Admin.token);
    expect((await admin2.get(`/auth/admin/users/${t1User.id}`)).status).to.equal(404);
    expect((await admin2.patch(`/auth/admin/users/${t1User.id}`, { is_active: false })).status).to.equal(404);
    expect(JSON.stringify((await admin2.get('/auth/admin/users')).body)).to.not.include(t1User.id);
  });
});
