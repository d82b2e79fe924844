// Workflow manifests (/api/_system/workflows) and version administration (/admin/workflows: list, toggle, fork).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectUnauthenticated } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { copyFixture, SIGNING_KEY } from './helpers.js';

const SUMMARY_KEYS = ['trigger_path', 'trigger_method', 'public', 'has_slow_steps', 'slow_kinds_present'];

describe('workflow manifests and version administration', function () {
  this.timeout(30_000);
  let service: Service;
  let projectDir: string;
  let admin: ReturnType<typeof client>;
  let user: ReturnType<typeof client>;

  /** Triggers the route and answers the schema_version of the run that served it (or the status when none did). */
  async function servedBy(triggerPath: string): Promise<string | number> {
    const result = await admin.post(triggerPath, {});
    if (result.status !== 201) return result.status;
    return (await admin.get(`/api/runs/${result.headers.get('x-svc-run-id')}`)).body.schema_version;
  }

  before(async function () {
    this.timeout(60_000);
    projectDir = copyFixture('versions');
    service = await startTestService({ projectDir, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    const adminToken = (await bootstrapAdmin(service.url)).token;
    admin = client(service.url, adminToken);
    user = client(service.url, (await createUser(service.url, adminToken, 'plain-user@example.com', { callers: ['caller:run'] })).token);
  });
  after(async () => {
    await service?.close();
  });

  describe('manifests', () => {
    it('GET /api/_system/workflows: an object keyed by name whose values are the manifest without name and steps', async () => {
      expectUnauthenticated(await call(service.url, 'GET', '/api/_system/workflows'));
      const result = await user.get('/api/_system/workflows');
      expect(result.status).to.equal(200);
      expect(Object.keys(result.body).sort()).to.deep.equal(['caller', 'layered', 'plain', 'versioned']);
      for (const value of Object.values(result.body)) expect(value).to.have.all.keys(...SUMMARY_KEYS);
      expect(result.body.caller).to.deep.equal({
        trigger_path: '/api/vt/caller',
        trigger_method: 'PUT',
        public: false,
        has_slow_steps: true,
        slow_kinds_present: ['APICall'],
      });
      expect(result.body.plain).to.deep.equal({
        trigger_path: '/api/workflows/plain/runs',
        trigger_method: 'POST',
        public: true,
        has_slow_steps: false,
        slow_kinds_present: [],
      });
      expect(result.body.versioned).to.include({ has_slow_steps: false });
      expect(JSON.stringify(result.body)).to.not.match(/caller:run|callers|required_/);
    });

    it('GET /api/_system/workflows/{name}: name, trigger, steps in order, and no scope or group', async () => {
      const result = await user.get('/api/_system/workflows/caller');
      expect(result.status).to.equal(200);
      expect(result.body).to.deep.equal({
        name: 'caller',
        trigger_path: '/api/vt/caller',
        trigger_method: 'PUT',
        public: false,
        has_slow_steps: true,
        slow_kinds_present: ['APICall'],
        concurrency: null,
        steps: [
          { id: 'fetch', kind: 'APICall', routes: { error: 'END' } },
          { id: 'shape', kind: 'Functional', routes: { error: 'END' } },
          { id: 'answer', kind: 'Response', routes: {} },
        ],
      });
      expect(JSON.stringify(result.body)).to.not.match(/caller:run|callers|scope|group/);
      expect((await user.get('/api/_system/workflows/layered')).body.steps).to.deep.equal([{ id: 'mark', kind: 'Functional', routes: { error: 'END' } }]);
    });

    it('404 for an unknown workflow', async () => {
      expect((await user.get('/api/_system/workflows/no_such_workflow')).status).to.equal(404);
    });
  });

  describe('GET /admin/workflows', () => {
    it('lists every version of every workflow, for iam:admin only', async () => {
      const result = await admin.get('/admin/workflows');
      expect(result.status).to.equal(200);
      expect(Object.keys(result.body).sort()).to.deep.equal(['caller', 'layered', 'plain', 'versioned']);
      expect(result.body.layered).to.deep.equal([
        { schema_version: 'v1', enabled: true, trigger_path: '/api/vt/layered', trigger_method: 'POST', description: 'Version v1 of layered.' },
        { schema_version: 'v2', enabled: true, trigger_path: '/api/vt/layered', trigger_method: 'POST', description: 'Version v2 of layered.' },
      ]);
      expect(result.body.plain).to.deep.equal([
        { schema_version: 'v1', enabled: true, trigger_path: '/api/workflows/plain/runs', trigger_method: 'POST', description: null },
      ]);
      expect((await user.get('/admin/workflows')).status).to.equal(403);
      expectUnauthenticated(await call(service.url, 'GET', '/admin/workflows'));
    });
  });

  describe('toggle', () => {
    it('disabling the only version takes its routes away at once; enabling brings them back', async () => {
      expect(await servedBy('/api/vt/versioned')).to.equal('v1');
      const off = await admin.patch('/admin/workflows/versioned/v1/toggle');
      expect(off.status).to.equal(200);
      expect(off.body).to.deep.equal({ name: 'versioned', schema_version: 'v1', enabled: false });
      expect(await servedBy('/api/vt/versioned')).to.equal(404);
      expect(await servedBy('/api/workflows/versioned/runs')).to.equal(404);
      expect((await admin.get('/api/_system/workflows/versioned')).status).to.equal(404);
      expect((await admin.get('/admin/workflows')).body.versioned[0].enabled).to.equal(false);
      const on = await admin.patch('/admin/workflows/versioned/v1/toggle');
      expect(on.body).to.deep.equal({ name: 'versioned', schema_version: 'v1', enabled: true });
      expect(await servedBy('/api/vt/versioned')).to.equal('v1');
      expect((await admin.get('/api/_system/workflows/versioned')).status).to.equal(200);
    });

    it('the newest enabled version serves the route', async () => {
      expect(await servedBy('/api/vt/layered')).to.equal('v2');
      expect((await admin.post('/api/vt/layered', {})).body).to.deep.equal({ served: 'v2' });
      expect((await admin.patch('/admin/workflows/layered/v2/toggle')).body.enabled).to.equal(false);
      expect(await servedBy('/api/vt/layered')).to.equal('v1');
      expect((await admin.post('/api/vt/layered', {})).body).to.deep.equal({ served: 'v1' });
      expect((await admin.patch('/admin/workflows/layered/v2/toggle')).body.enabled).to.equal(true);
      expect(await servedBy('/api/vt/layered')).to.equal('v2');
    });

    it('404 for an absent version, 403 without iam:admin', async () => {
      expect((await admin.patch('/admin/workflows/versioned/v9/toggle')).status).to.equal(404);
      expect((await admin.patch('/admin/workflows/nothing/v1/toggle')).status).to.equal(404);
      expect((await user.patch('/admin/workflows/versioned/v1/toggle')).status).to.equal(403);
      expect(await servedBy('/api/vt/versioned')).to.equal('v1');
    });
  });

  describe('fork', () => {
    it('writes workflows/<name>_<new>.yaml with the new version, disabled until toggled; then it serves the route', async () => {
      const result = await admin.post('/admin/workflows/versioned/v1/fork', { new_version: 'v3' });
      expect(result.status, JSON.stringify(result.body)).to.equal(200);
      expect(result.body).to.deep.equal({ name: 'versioned', source_version: 'v1', new_version: 'v3', file: path.join('workflows', 'versioned_v3.yaml') });
      const file = path.join(projectDir, 'workflows', 'versioned_v3.yaml');
      expect(existsSync(file)).to.equal(true);
      const written = parse(readFileSync(file, 'utf8'));
      expect(written.metadata).to.include({ name: 'versioned', schema_version: 'v3' });
      expect(written.spec.steps).to.deep.equal(parse(readFileSync(path.join(projectDir, 'workflows', 'versioned.yaml'), 'utf8')).spec.steps);
      const listed = (await admin.get('/admin/workflows')).body.versioned;
      expect(listed.map((v: { schema_version: string; enabled: boolean }) => [v.schema_version, v.enabled])).to.deep.equal([
        ['v1', true],
        ['v3', false],
      ]);
      expect(await servedBy('/api/vt/versioned')).to.equal('v1');
      expect((await admin.patch('/admin/workflows/versioned/v3/toggle')).body).to.deep.equal({ name: 'versioned', schema_version: 'v3', enabled: true });
      expect(await servedBy('/api/vt/versioned')).to.equal('v3');
    });

    it('two concurrent forks to the same version: one 200, one 409', async () => {
      const results = await Promise.all([
        admin.post('/admin/workflows/layered/v1/fork', { new_version: 'v7' }),
        admin.post('/admin/workflows/layered/v2/fork', { new_version: 'v7' }),
      ]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
      expect((await admin.get('/admin/workflows')).body.layered.filter((v: { schema_version: string }) => v.schema_version === 'v7')).to.have.length(1);
      expect((await admin.post('/admin/workflows/layered/v1/fork', { new_version: 'v7' })).status).to.equal(409);
      expect((await admin.post('/admin/workflows/layered/v1/fork', { new_version: 'v2' })).status).to.equal(409);
    });

    it('refuses a bad new_version with a 4xx and writes nothing', async () => {
      for (const body of [
        { new_version: '../evil' },
        { new_version: 'v 2' },
        { new_version: '' },
        { new_version: 'x'.repeat(40) },
        { new_version: 5 },
        {},
        { new_version: 'v9', extra: 1 },
      ]) {
        const result = await admin.post('/admin/workflows/versioned/v1/fork', body);
        expect(result.status, JSON.stringify(body)).to.be.oneOf([400, 422]);
      }
      expect(existsSync(path.join(projectDir, 'evil.yaml'))).to.equal(false);
      expect(existsSync(path.join(projectDir, 'workflows', 'versioned_v9.yaml'))).to.equal(false);
    });

    it('404 for an absent source, 403 without iam:admin', async () => {
      expect((await admin.post('/admin/workflows/versioned/v9/fork', { new_version: 'v10' })).status).to.equal(404);
      expect((await admin.post('/admin/workflows/nothing/v1/fork', { new_version: 'v10' })).status).to.equal(404);
      expect((await user.post('/admin/workflows/versioned/v1/fork', { new_version: 'v11' })).status).to.equal(403);
      expect(existsSync(path.join(projectDir, 'workflows', 'versioned_v11.yaml'))).to.equal(false);
    });
  });
});
