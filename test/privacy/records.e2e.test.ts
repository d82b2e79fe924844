// A model with `personal: true` fields: sealed in events and table, opened on read, erased alone.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { parseModelDefinition } from '../../src/models/definition.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { bootstrapAdmin, call, expectError, type Admin } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { emptyProjectDir, startTestService } from '../support/service.js';

const CUSTOMER = `kind: ModelDefinition
metadata: {name: Customer, schema_version: v1}
spec:
  tablename: privacy_customers
  fields:
    - {name: id, type: uuid, primary_key: true}
    - {name: name, type: string, required: true}
    - {name: phone, type: string, personal: true}
    - {name: notes, type: text, personal: true}
  api:
    crud: [create, read, update, delete, list]
`;

describe('privacy: model fields marked personal: true', () => {
  let service: Service;
  let admin: Admin;
  const api = (method: string, urlPath: string, json?: unknown) => call(service.url, method, urlPath, { token: admin.token, ...(json ? { json } : {}) });
  const holding = async (needle: string) => {
    const { rows } = await service.kernel.pool.query(
      'SELECT (SELECT count(*) FROM events e WHERE e::text LIKE $1)::int AS events, (SELECT count(*) FROM privacy_customers c WHERE c::text LIKE $1)::int AS rows',
      [`%${needle}%`],
    );
    return rows[0] as { events: number; rows: number };
  };

  before(async () => {
    const project = copyProject(emptyProjectDir());
    mkdirSync(path.join(project, 'models'), { recursive: true });
    service = await startTestService({ projectDir: copyProject(project, { 'models/customer.yaml': CUSTOMER }) });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => service?.close());

  it('seals personal fields, answers them opened, and erases them alone', async () => {
    const created = await api('POST', '/models/customer', { name: 'Ada', phone: '+15550199', notes: 'prefers mornings' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body).to.include({ name: 'Ada', phone: '+15550199', notes: 'prefers mornings' });
    const id = created.body.id as string;
    expect(await holding('15550199')).to.deep.equal({ events: 0, rows: 0 });
    expect(await holding('mornings')).to.deep.equal({ events: 0, rows: 0 });
    expect((await holding('Ada')).rows, 'other fields stay plain').to.equal(1);

    const patched = await api('PATCH', `/models/customer/${id}`, { notes: 'prefers evenings' });
    expect(patched.body).to.include({ notes: 'prefers evenings', phone: '+15550199' });
    expect(await holding('evenings')).to.deep.equal({ events: 0, rows: 0 });
    expect((await api('GET', '/models/customer')).body[0]).to.include({ phone: '+15550199' });

    const erased = await api('POST', '/admin/erasure', { subject_type: 'record', id });
    expect(erased.status, JSON.stringify(erased.body)).to.equal(200);
    expect((await api('GET', `/models/customer/${id}`)).body).to.include({ id, name: 'Ada', phone: null, notes: null });
    await rebuildProjection(service.kernel.pool, service.kernel.registry, service.kernel.registry.get('records:privacy_customers')!);
    expect((await api('GET', `/models/customer/${id}`)).body).to.include({ id, name: 'Ada', phone: null, notes: null });
    expect((await api('GET', '/admin/audit/verify')).body).to.include({ ok: true });
    expectError(await api('POST', '/admin/erasure', { subject_type: 'record', id: '00000000-0000-4000-8000-000000000002' }), 404);
  });

  it('refuses personal on a field that is not text, or on the primary key', () => {
    const document = (fields: string) => ({
      file: 'models/x.yaml',
      version: 'v1',
      body: { kind: 'ModelDefinition', metadata: { name: 'X' }, spec: { tablename: 'x', fields: JSON.parse(fields) } },
    });
    const { problems } = parseModelDefinition(
      document('[{"name":"id","type":"uuid","primary_key":true,"personal":true},{"name":"age","type":"integer","personal":true}]') as never,
    );
    expect(problems).to.include.members(['personal field id must be of type string or text (it is stored sealed)', 'the primary key id cannot be personal']);
    expect(problems).to.include('personal field age must be of type string or text (it is stored sealed)');
  });
});
