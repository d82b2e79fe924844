// Artifacts in a multi-tenant deployment: uploads belong to the uploader's tenant (names, versions,
// reads, lists, runs), project files are shared by every tenant, and the log keeps the tenant.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { artifactsProjection } from '../../src/artifacts/projection.js';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { FakeOpenAi } from '../agents/support/fakeOpenAi.js';
import { createTestDatabase, freePort } from '../support/db.js';
import { bootstrapAdmin, client, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { createUser, type SignedInUser } from '../support/users.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const SIGNING_KEY = '7e'.repeat(32);
const TENANTS = { SVC_TENANT_IDS: 't1,t2', SVC_SIGNING_KEY: SIGNING_KEY };
const ARTIFACT_ROLES = { artifact_editors: ['artifacts:read', 'artifacts:write', 'runs:read'] };

describe('artifacts: one tenant never sees another tenant’s uploads', function () {
  this.timeout(60_000);
  let databaseUrl: string;
  let service: Service;
  let admin: Admin;
  let t1: SignedInUser;
  let t2: SignedInUser;
  const as = (user: SignedInUser) => client(service.url, user.token);

  before(async () => {
    databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl, projectDir: path.join(FIXTURES, 'shared'), env: TENANTS });
    admin = await bootstrapAdmin(service.url);
    t1 = await createUser(service.url, admin.token, 'ann@t1.example', ARTIFACT_ROLES, { tenant: 't1' });
    t2 = await createUser(service.url, admin.token, 'bob@t2.example', ARTIFACT_ROLES, { tenant: 't2' });
  });
  after(async () => {
    await killAllServices();
    await service?.close();
  });

  it('reads and lists only the caller’s tenant: another tenant’s upload is 404 and not listed', async () => {
    const uploaded = await as(t2).post('/api/artifacts', { name: 'playbook', type: 'prompt', content: 'T2 SECRET PLAYBOOK' });
    expect(uploaded.status, JSON.stringify(uploaded.body)).to.equal(201);
    expect((await as(t2).get('/api/artifacts/playbook')).body).to.include({ content: 'T2 SECRET PLAYBOOK', version: '1' });

    const read = await as(t1).get('/api/artifacts/playbook');
    expect(read.status, JSON.stringify(read.body)).to.equal(404);
    expect(JSON.stringify(read.body)).to.not.include('T2 SECRET');
    expect((await as(t1).get('/api/artifacts/playbook?version=1')).status).to.equal(404);
    const names = ((await as(t1).get('/api/artifacts')).body as { name: string }[]).map((a) => a.name);
    expect(names).to.not.include('playbook');
    // A deployment admin's data is per tenant too: the bootstrap admin is in t1.
    expect((await client(service.url, admin.token).get('/api/artifacts/playbook')).status).to.equal(404);
  });

  it('an upload stays in its tenant: the same name is a new artifact there, numbered from 1, and never served to the other tenant', async () => {
    const t1Version = await as(t1).post('/api/artifacts', { name: 'playbook', type: 'prompt', content: 'T1 PLAYBOOK' });
    expect(t1Version.status, JSON.stringify(t1Version.body)).to.equal(201);
    expect(t1Version.body.version, 'each tenant numbers its own versions').to.equal('1');
    expect((await as(t2).get('/api/artifacts/playbook')).body, 't2 is still served its own').to.include({ content: 'T2 SECRET PLAYBOOK', version: '1' });
    expect((await as(t1).get('/api/artifacts/playbook')).body).to.include({ content: 'T1 PLAYBOOK', version: '1' });

    // Each tenant's name keeps its own type.
    const otherType = await as(t1).post('/api/artifacts', { name: 'limits', type: 'guardrail', content: { max_chars: 10 } });
    expect(otherType.status, JSON.stringify(otherType.body)).to.equal(201);
    const sameNameOtherType = await as(t2).post('/api/artifacts', { name: 'limits', type: 'steering', content: 'be brief' });
    expect(sameNameOtherType.status, JSON.stringify(sameNameOtherType.body)).to.equal(201);
    expect((await as(t1).post('/api/artifacts', { name: 'limits', type: 'steering', content: 'x' })).status, 'a name keeps its type in its tenant').to.equal(
      409,
    );

    const second = await as(t2).post('/api/artifacts', { name: 'playbook', type: 'prompt', content: 'T2 PLAYBOOK V2' });
    expect(second.body.version).to.equal('2');
    const listed = ((await as(t1).get('/api/artifacts')).body as any[]).find((a) => a.name === 'playbook');
    expect(
      listed.versions.map((v: any) => v.version),
      't1 lists its one version only',
    ).to.deep.equal(['1']);
    expect((await as(t1).get('/api/artifacts/playbook?version=2')).status).to.equal(404);
  });

  it('project files are shared by every tenant and still own their names', async () => {
    for (const user of [t1, t2]) {
      const read = await as(user).get('/api/artifacts/house_rules');
      expect(read.body).to.include({ source: 'project', version: '1' });
      const refused = await as(user).post('/api/artifacts', { name: 'house_rules', type: 'steering', content: 'mine' });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
      expect(((await as(user).get('/api/artifacts')).body as any[]).find((a) => a.name === 'house_rules')).to.include({
        source: 'project',
        shadowed_uploads: 0,
      });
    }
  });

  it('stores the tenant in the log (stream artifact-<tenant>/<name>, tenant in the data) and rebuilds the same rows', async () => {
    const { rows } = await service.kernel.pool.query<{ stream_id: string; data: { tenant?: string; name: string } }>(
      `SELECT stream_id, data FROM events WHERE type = 'ArtifactUploaded' AND data->>'name' = 'playbook' ORDER BY global_position`,
    );
    expect(rows.map((r) => [r.stream_id, r.data.tenant])).to.deep.equal([
      ['artifact-t2/playbook', 't2'],
      ['artifact-t1/playbook', 't1'],
      ['artifact-t2/playbook', 't2'],
    ]);
    const table = async () =>
      (await service.kernel.pool.query(`SELECT tenant, name, version, type, content, hash, created_at FROM svc_artifacts ORDER BY tenant, name, version`)).rows;
    const before = await table();
    expect(before.filter((r) => r.name === 'playbook').map((r) => [r.tenant, r.version])).to.deep.equal([
      ['t1', '1'],
      ['t2', '1'],
      ['t2', '2'],
    ]);
    await rebuildProjection(service.kernel.pool, service.kernel.registry, service.kernel.registry.get(artifactsProjection.name)!);
    expect(await table()).to.deep.equal(before);
  });

  describe('runs on a second worker process', () => {
    const fake = new FakeOpenAi();
    let worker: ServiceProcess;

    before(async function () {
      this.timeout(60_000);
      await fake.start();
      for (const [user, content] of [
        [t1, 'T1-SYSTEM'],
        [t2, 'T2-SYSTEM'],
      ] as const) {
        expect((await as(user).post('/api/artifacts', { name: 'greeting', type: 'prompt', content })).status).to.equal(201);
      }
      // Only t2 has it: boot validation (V017) counts any tenant's upload, so this worker starts.
      expect((await as(t2).post('/api/artifacts', { name: 't2_style', type: 'steering', content: 'T2-STYLE' })).status).to.equal(201);
      // Nothing listens there: a t2 run reaches the server and fails calling it.
      const tools = await as(t2).post('/api/artifacts', { name: 't2_tools', type: 'mcp', content: { url: `http://127.0.0.1:${await freePort()}/mcp` } });
      expect(tools.status, JSON.stringify(tools.body)).to.equal(201);
      worker = await ServiceProcess.start(databaseUrl, path.join(FIXTURES, 'agents'), { ...TENANTS, SVC_LLM_BASE_URL: fake.baseUrl });
    });
    after(async () => {
      await worker?.stop();
      await fake.stop();
    });

    it('a run resolves artifact://name against the project files and its own tenant’s uploads', async () => {
      for (const [user, name, system] of [
        [t1, 'Tessa', 'T1-SYSTEM'],
        [t2, 'Tobias', 'T2-SYSTEM'],
      ] as const) {
        fake.script(name, [{ content: `Hello ${name}` }]);
        const run = await client(worker.url, user.token).post('/api/tenants/greet', { name });
        expect(run.status, JSON.stringify(run.body)).to.equal(201);
        expect(run.body).to.deep.equal({ greeting: `Hello ${name}` });
        const [sent] = fake.requestsFor(name);
        expect(sent!.messages[0], `the ${user.email} run's system prompt`).to.deep.equal({
          role: 'system',
          content: `${system}\n\nHOUSE-RULE: never promise refunds.\n`,
        });
      }
    });

    it('a run of a tenant without the upload does not get another tenant’s: the step fails naming the reference', async () => {
      fake.script('Tilda', [{ content: 'Styled Tilda' }]);
      const t2Run = await client(worker.url, t2.token).post('/api/tenants/styled', { name: 'Tilda' });
      expect(t2Run.status, JSON.stringify(t2Run.body)).to.equal(201);
      expect(fake.requestsFor('Tilda')[0]!.messages[0]).to.deep.equal({ role: 'system', content: 'T2-STYLE' });

      const t1Run = await client(worker.url, t1.token).post('/api/tenants/styled', { name: 'Theo' });
      expect(t1Run.status, JSON.stringify(t1Run.body)).to.equal(400);
      expect(t1Run.body.error.message).to.equal('artifact://t2_style@1 does not resolve to an artifact of tenant t1');
      expect(JSON.stringify(t1Run.body)).to.not.include('T2-STYLE');
      expect(
        fake.requests.filter((r) => JSON.stringify(r.messages).includes('Theo')),
        'the model was never asked',
      ).to.have.length(0);
    });

    it('an MCP step reaches the server its own tenant uploaded, never another tenant’s', async () => {
      const t2Run = await client(worker.url, t2.token).post('/api/tenants/tools', {});
      expect(t2Run.body.error.message, JSON.stringify(t2Run.body)).to.match(/^MCP add failed/);
      const t1Run = await client(worker.url, t1.token).post('/api/tenants/tools', {});
      expect(t1Run.status, JSON.stringify(t1Run.body)).to.equal(400);
      expect(t1Run.body.error.message).to.equal('MCP add failed: artifact://t2_tools@1 does not resolve to an artifact of tenant t1');
    });
  });
});
