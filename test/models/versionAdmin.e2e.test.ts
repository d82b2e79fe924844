// /admin/models: version records, toggles that CRUD follows at once, forks written as files and recorded as events.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, eventually, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { copyFixture } from './helpers.js';

/** Every file under a folder, relative to it. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    return statSync(full).isDirectory() ? filesUnder(full, path.join(prefix, entry)) : [path.join(prefix, entry)];
  });
}

describe('model version administration', () => {
  let projectDir: string;
  let service: Service;
  let adminToken: string;
  const admin = () => client(service.url, adminToken);

  before(async function () {
    this.timeout(60_000);
    projectDir = copyFixture('shop');
    service = await startTestService({ projectDir });
    adminToken = (await bootstrapAdmin(service.url)).token;
  });
  after(async () => {
    await service?.close();
  });

  const streamEvents = async (name: string) =>
    (await service.kernel.pool.query('SELECT type, data FROM events WHERE stream_id = $1 ORDER BY stream_position', [`model-${name}`])).rows;
  const versionsOf = async (name: string) => ((await admin().get('/admin/models')).body[name] ?? []) as Record<string, unknown>[];

  it('GET /admin/models answers model version records keyed by model name', async () => {
    const result = await admin().get('/admin/models');
    expect(result.status).to.equal(200);
    expect(Object.keys(result.body).sort()).to.deep.equal(['Customer', 'Hidden', 'Note', 'Secret', 'Ticket']);
    expect(result.body.Customer).to.deep.equal([
      {
        schema_version: 'v1',
        enabled: true,
        tablename: 'customers',
        datasource: 'primary',
        fields: ['id', 'name', 'tier', 'created_at'],
        description: 'A customer who raises tickets.',
      },
    ]);
    expect(result.body.Secret).to.deep.equal([
      { schema_version: 'v1', enabled: true, tablename: 'secrets', datasource: 'primary', fields: ['id', 'title'], description: null },
    ]);
    expect(result.body.Ticket[0].fields).to.deep.equal([
      'id',
      'subject',
      'body',
      'priority',
      'score',
      'urgent',
      'status',
      'due',
      'customer_id',
      'labels',
      'created_at',
      'updated_at',
    ]);
  });

  it('needs a token for every admin route', async () => {
    const anonymous = client(service.url);
    expectError(await anonymous.get('/admin/models'), 401, 'UNAUTHENTICATED');
    expectError(await anonymous.patch('/admin/models/Note/v1/toggle'), 401, 'UNAUTHENTICATED');
    expectError(await anonymous.post('/admin/models/Note/v1/fork', { new_version: 'v9' }), 401, 'UNAUTHENTICATED');
    expect(existsSync(path.join(projectDir, 'models', 'note_v9.yaml'))).to.equal(false);
  });

  it('toggle flips enabled, CRUD follows at once (a disabled only version is 404), and each toggle is an event on model-<name>', async () => {
    const created = await admin().post('/models/note/', {});
    expect(created.status).to.equal(404);
    expect((await admin().get('/models/note/')).status).to.equal(200);

    const off = await admin().patch('/admin/models/Note/v1/toggle');
    expect(off.status).to.equal(200);
    expect(off.body).to.deep.equal({ name: 'Note', schema_version: 'v1', enabled: false });
    expectError(await admin().get('/models/note/'), 404, 'NOT_FOUND');
    expect((await versionsOf('Note'))[0]!.enabled).to.equal(false);
    expect((await admin().get('/admin/scopes')).body.crud).to.not.have.property('note');

    const on = await admin().patch('/admin/models/Note/v1/toggle');
    expect(on.body).to.deep.equal({ name: 'Note', schema_version: 'v1', enabled: true });
    expect((await admin().get('/models/note/')).status).to.equal(200);
    expect((await versionsOf('Note'))[0]!.enabled).to.equal(true);

    const events = await streamEvents('Note');
    expect(events.map((e) => [e.type, e.data.version, e.data.enabled])).to.deep.equal([
      ['DefinitionVersionToggled', 'v1', false],
      ['DefinitionVersionToggled', 'v1', true],
    ]);
  });

  it('toggle of an absent version or model is 404 and records nothing', async () => {
    expectError(await admin().patch('/admin/models/Note/v9/toggle'), 404, 'NOT_FOUND');
    expectError(await admin().patch('/admin/models/Nope/v1/toggle'), 404, 'NOT_FOUND');
    expectError(await admin().patch('/admin/models/note/v1/toggle'), 404, 'NOT_FOUND');
    expect(await streamEvents('Nope')).to.deep.equal([]);
    expect(await streamEvents('note')).to.deep.equal([]);
  });

  it('fork writes models/<name_lower>_<new>.yaml with the new schema_version, starts disabled, and is an event', async () => {
    const result = await admin().post('/admin/models/Ticket/v1/fork', { new_version: 'v2' });
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.deep.equal({ name: 'Ticket', source_version: 'v1', new_version: 'v2', file: path.join('models', 'ticket_v2.yaml') });
    const written = parse(readFileSync(path.join(projectDir, 'models', 'ticket_v2.yaml'), 'utf8'));
    const source = parse(readFileSync(path.join(projectDir, 'models', 'ticket.yaml'), 'utf8'));
    expect(written.metadata).to.deep.include({ name: 'Ticket', schema_version: 'v2', enabled: false });
    expect(written.spec).to.deep.equal(source.spec);

    const forked = (await streamEvents('Ticket')).filter((e) => e.type === 'DefinitionVersionForked');
    expect(forked).to.have.length(1);
    expect(forked[0].data).to.deep.include({
      kind: 'model',
      name: 'Ticket',
      sourceVersion: 'v1',
      newVersion: 'v2',
      file: path.join('models', 'ticket_v2.yaml'),
    });

    const listed = await eventually(async () => (await versionsOf('Ticket')).length === 2, 5000);
    expect(listed.ok, 'the fork shows up in /admin/models').to.equal(true);
    expect((await versionsOf('Ticket')).map((v) => [v.schema_version, v.enabled])).to.deep.equal([
      ['v1', true],
      ['v2', false],
    ]);
  });

  it('an enabled fork serves CRUD; disabling every version removes the routes', async () => {
    const record = (await admin().post('/models/ticket/', { subject: 'survives versions' })).body;
    expect((await admin().patch('/admin/models/Ticket/v2/toggle')).body).to.deep.equal({ name: 'Ticket', schema_version: 'v2', enabled: true });
    expect((await admin().patch('/admin/models/Ticket/v1/toggle')).body.enabled).to.equal(false);
    expect((await admin().get(`/models/ticket/${record.id}`)).body.subject).to.equal('survives versions');
    expect((await admin().patch('/admin/models/Ticket/v2/toggle')).body.enabled).to.equal(false);
    expectError(await admin().get(`/models/ticket/${record.id}`), 404);
    expectError(await admin().get('/models/ticket/'), 404);
    expect((await admin().patch('/admin/models/Ticket/v1/toggle')).body.enabled).to.equal(true);
    expect((await admin().get(`/models/ticket/${record.id}`)).status).to.equal(200);
  });

  it('fork onto an existing version is 409; fork of an absent source is 404; neither writes a file', async () => {
    const before = filesUnder(projectDir).sort();
    expectError(await admin().post('/admin/models/Ticket/v1/fork', { new_version: 'v2' }), 409);
    expectError(await admin().post('/admin/models/Ticket/v2/fork', { new_version: 'v1' }), 409);
    expectError(await admin().post('/admin/models/Ticket/v9/fork', { new_version: 'v10' }), 404, 'NOT_FOUND');
    expectError(await admin().post('/admin/models/Nope/v1/fork', { new_version: 'v10' }), 404, 'NOT_FOUND');
    expect(filesUnder(projectDir).sort()).to.deep.equal(before);
  });

  it('refuses new_version values that are not plain tokens (400/422) and writes no file anywhere', async () => {
    const parent = path.dirname(projectDir);
    const parentBefore = readdirSync(parent).sort();
    const before = filesUnder(projectDir).sort();
    for (const newVersion of [
      '../x',
      '../../x',
      'a/b',
      'a\\b',
      '',
      'v 2',
      '..',
      '.hidden',
      '-v',
      'v2.yaml',
      'x'.repeat(65),
      'x'.repeat(40),
      'v2\u0000',
      5,
      null,
      'v1..2',
      'v1.',
      '.v1',
      'v1./x',
      '1.2/..',
      'v1.yml',
    ]) {
      const result = await admin().post('/admin/models/Customer/v1/fork', { new_version: newVersion });
      expect(result.status, `${JSON.stringify(newVersion)}: ${JSON.stringify(result.body)}`).to.be.oneOf([400, 422]);
    }
    expect((await admin().post('/admin/models/Customer/v1/fork', {})).status).to.equal(422);
    expect(filesUnder(projectDir).sort()).to.deep.equal(before);
    expect(readdirSync(parent).sort()).to.deep.equal(parentBefore);
    expect(await versionsOf('Customer')).to.have.length(1);
    expect((await streamEvents('Customer')).filter((e) => e.type === 'DefinitionVersionForked')).to.deep.equal([]);
  });

  it('two concurrent forks of the same new version: exactly one 200 and one 409, one file, one event', async () => {
    const results = await Promise.all([
      admin().post('/admin/models/Customer/v1/fork', { new_version: 'v3' }),
      admin().post('/admin/models/Customer/v1/fork', { new_version: 'v3' }),
    ]);
    expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body))).to.deep.equal([200, 409]);
    expect(existsSync(path.join(projectDir, 'models', 'customer_v3.yaml'))).to.equal(true);
    expect(parse(readFileSync(path.join(projectDir, 'models', 'customer_v3.yaml'), 'utf8')).metadata.schema_version).to.equal('v3');
    expect((await streamEvents('Customer')).filter((e) => e.type === 'DefinitionVersionForked')).to.have.length(1);
  });

  it('forks to a dotted version token like v1.1: file models/<name>_v1.1.yaml, listed, toggled like any other version', async () => {
    const result = await admin().post('/admin/models/Note/v1/fork', { new_version: 'v1.1' });
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.deep.equal({ name: 'Note', source_version: 'v1', new_version: 'v1.1', file: path.join('models', 'note_v1.1.yaml') });
    const written = parse(readFileSync(path.join(projectDir, 'models', 'note_v1.1.yaml'), 'utf8'));
    expect(written.metadata).to.deep.include({ name: 'Note', schema_version: 'v1.1', enabled: false });
    expect((await streamEvents('Note')).filter((e) => e.type === 'DefinitionVersionForked').map((e) => e.data.newVersion)).to.deep.equal(['v1.1']);
    const listed = await eventually(async () => (await versionsOf('Note')).some((v) => v.schema_version === 'v1.1'), 5000);
    expect(listed.ok, 'the fork shows up in /admin/models').to.equal(true);
    expect((await admin().patch('/admin/models/Note/v1.1/toggle')).body).to.deep.equal({ name: 'Note', schema_version: 'v1.1', enabled: true });
    expectError(await admin().post('/admin/models/Note/v1/fork', { new_version: 'v1.1' }), 409);
    const again = await admin().post('/admin/models/Note/v1.1/fork', { new_version: '1.2.0-rc_1' });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.file).to.equal(path.join('models', 'note_1.2.0-rc_1.yaml'));
  });
});
