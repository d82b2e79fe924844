// The CRUD kill switch (svc.yaml spec.api.expose_model_crud, SVC_EXPOSE_MODEL_CRUD wins) and /admin/scopes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { ABSENT_ID, copyFixture } from './helpers.js';

/** One signing key for the three services on one database, so one bootstrapped admin token works on all. */
const SIGNING_KEY = '7f'.repeat(32);

const SYSTEM_CONFIG_OFF = `kind: SystemConfig
spec:
  api:
    expose_model_crud: false
`;

describe('CRUD kill switch', () => {
  let plainDir: string;
  let switchedOffDir: string;
  let envOff: Service;
  let fileOff: Service;
  let fileOffEnvOn: Service;
  let adminToken: string;

  before(async function () {
    this.timeout(60_000);
    const databaseUrl = await createTestDatabase();
    plainDir = copyFixture('shop');
    switchedOffDir = copyFixture('shop');
    writeFileSync(path.join(switchedOffDir, 'svc.yaml'), SYSTEM_CONFIG_OFF);
    envOff = await startTestService({ databaseUrl, projectDir: plainDir, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_EXPOSE_MODEL_CRUD: 'false' } });
    adminToken = (await bootstrapAdmin(envOff.url)).token;
    fileOff = await startTestService({ databaseUrl, projectDir: switchedOffDir, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    fileOffEnvOn = await startTestService({ databaseUrl, projectDir: switchedOffDir, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_EXPOSE_MODEL_CRUD: 'true' } });
  });
  after(async () => {
    await envOff?.close();
    await fileOff?.close();
    await fileOffEnvOn?.close();
  });

  async function expectCrudAbsent(service: Service): Promise<void> {
    const as = client(service.url, adminToken);
    for (const result of [
      await as.get('/models/ticket/'),
      await as.get(`/models/ticket/${ABSENT_ID}`),
      await as.post('/models/ticket/', { subject: 'x' }),
      await as.patch(`/models/ticket/${ABSENT_ID}`, { subject: 'x' }),
      await as.delete(`/models/ticket/${ABSENT_ID}`),
      await client(service.url).get('/models/ticket/'),
    ]) {
      expectError(result, 404, 'NOT_FOUND');
    }
    const scopes = await as.get('/admin/scopes');
    expect(scopes.status).to.equal(200);
    expect(scopes.body).to.deep.equal({ crud: {}, workflows: {}, system: ['iam:admin', 'audit:read', 'metrics:read'], crud_api_enabled: false });
    const models = await as.get('/admin/models');
    expect(models.status).to.equal(200);
    expect(Object.keys(models.body)).to.have.members(['Customer', 'Hidden', 'Note', 'Secret', 'Ticket']);
  }

  it('SVC_EXPOSE_MODEL_CRUD=false removes every /models route while /admin/models still works', async () => {
    await expectCrudAbsent(envOff);
  });

  it('svc.yaml spec.api.expose_model_crud: false does the same when the environment is silent', async () => {
    await expectCrudAbsent(fileOff);
  });

  it('SVC_EXPOSE_MODEL_CRUD=true overrides the file: the routes are back', async () => {
    const as = client(fileOffEnvOn.url, adminToken);
    const created = await as.post('/models/ticket/', { subject: 'back' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect((await as.get(`/models/ticket/${created.body.id}`)).body.subject).to.equal('back');
    expect((await as.get('/models/ticket/')).status).to.equal(200);
    // Same database: the switched-off services still refuse the route, not the data.
    expectError(await client(fileOff.url, adminToken).get(`/models/ticket/${created.body.id}`), 404);
  });

  it('/admin/scopes lists the scope of every exposed operation per model, honouring overrides, and crud_api_enabled', async () => {
    const scopes = await client(fileOffEnvOn.url, adminToken).get('/admin/scopes');
    expect(scopes.status).to.equal(200);
    expect(scopes.body).to.deep.equal({
      crud: {
        customer: { list: 'customer:read', read: 'customer:read', create: 'customer:write', update: 'customer:write', delete: 'customer:delete' },
        note: { list: 'note:read', read: 'note:read' },
        secret: { list: 'secret:read', read: 'secret:read', create: 'secret:write', update: 'secret:write', delete: 'secret:delete' },
        ticket: { list: 'tickets:read', read: 'tickets:read', create: 'tickets:write', update: 'tickets:write', delete: 'tickets:delete' },
      },
      workflows: {},
      system: ['iam:admin', 'audit:read', 'metrics:read'],
      crud_api_enabled: true,
    });
  });

  it('/admin/scopes and /admin/models need iam:admin', async () => {
    expectError(await client(fileOffEnvOn.url).get('/admin/scopes'), 401, 'UNAUTHENTICATED');
    expectError(await client(envOff.url).get('/admin/models'), 401, 'UNAUTHENTICATED');
  });
});
