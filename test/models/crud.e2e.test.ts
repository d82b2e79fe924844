// Model CRUD over HTTP: scopes AND groups per operation, opt-in operations, validation, 404s, records as the read variant.
import { expect } from 'chai';
import { toAppError } from '../../src/http/errors.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client, expectError, expectUnauthenticated, type HttpResult } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, roleId } from '../support/users.js';
import { ABSENT_ID, copyFixture, grantRole, UUID } from './helpers.js';

type Operation = 'list' | 'read' | 'create' | 'update' | 'delete';
const OPERATIONS: Operation[] = ['list', 'read', 'create', 'update', 'delete'];
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)$/;

describe('model CRUD under /models/{model}/', () => {
  let service: Service;
  let adminToken: string;
  const people: Record<string, { id: string; token: string }> = {};
  const admin = () => client(service.url, adminToken);

  before(async function () {
    this.timeout(60_000);
    // A private copy: the 403 fork attempt below must not be able to write into the fixture.
    service = await startTestService({ projectDir: copyFixture('shop') });
    adminToken = (await bootstrapAdmin(service.url)).token;
    const roles: Record<string, string[]> = {
      't-default': ['ticket:read', 'ticket:write', 'ticket:delete'],
      't-read': ['tickets:read'],
      't-write': ['tickets:write'],
      't-delete': ['tickets:delete'],
      's-scopes': ['secret:read', 'secret:write', 'secret:delete'],
      agents: [],
      leads: [],
    };
    for (const [name, scopes] of Object.entries(roles)) await roleId(service.url, adminToken, name, scopes);
    // bcrypt (cost 12) is slow: three users, whose roles then grow through POST /auth/refresh.
    const [ticketUser, secretUser, leadUser] = await Promise.all([
      createUser(service.url, adminToken, 'ticket-user@example.com', {}),
      createUser(service.url, adminToken, 'secret-user@example.com', { 's-scopes': [] }),
      createUser(service.url, adminToken, 'lead-user@example.com', { leads: [] }),
    ]);
    Object.assign(people, { ticketUser, secretUser, leadUser });
  });
  after(async () => {
    await service?.close();
  });

  async function createAsAdmin(model: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const created = await admin().post(`/models/${model}/`, body);
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body;
  }

  /** Record events in the whole log: a refused request must not change it. */
  async function recordEvents(): Promise<number> {
    const { rows } = await service.kernel.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE type LIKE 'Record%'`);
    return rows[0]!.n;
  }

  async function rowCount(table: string): Promise<number> {
    const { rows } = await service.kernel.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    return rows[0]!.n;
  }

  /** Runs one operation as `token` on a record of its own; answers the HTTP result. */
  async function attempt(model: string, operation: Operation, token: string | undefined, body: Record<string, unknown>): Promise<HttpResult> {
    const as = client(service.url, token);
    const id = operation === 'read' || operation === 'update' || operation === 'delete' ? (await createAsAdmin(model, body)).id : undefined;
    switch (operation) {
      case 'list':
        return as.get(`/models/${model}/`);
      case 'read':
        return as.get(`/models/${model}/${id}`);
      case 'create':
        return as.post(`/models/${model}/`, body);
      case 'update':
        return as.patch(`/models/${model}/${id}`, body);
      case 'delete':
        return as.delete(`/models/${model}/${id}`);
    }
  }

  const SUCCESS: Record<Operation, number> = { list: 200, read: 200, create: 201, update: 200, delete: 204 };

  /** Every operation as `token`: the allowed ones succeed, the others are 403 and change nothing. */
  async function checkMatrix(model: string, table: string, body: Record<string, unknown>, who: string, token: string, allowed: Operation[]): Promise<void> {
    for (const operation of OPERATIONS) {
      const before = await rowCount(table);
      const result = await attempt(model, operation, token, body);
      const label = `${who} ${operation} ${model}: ${JSON.stringify(result.body)}`;
      if (allowed.includes(operation)) {
        expect(result.status, label).to.equal(SUCCESS[operation]);
      } else {
        expect(result.status, label).to.equal(403);
        expect(result.body.code, label).to.equal('PERMISSION_DENIED');
        // The record made for the attempt is still there: nothing was created, changed or deleted.
        const expectedRows = before + (operation === 'list' || operation === 'create' ? 0 : 1);
        expect(await rowCount(table), label).to.equal(expectedRows);
      }
    }
  }

  describe('authorization', () => {
    it('refuses every operation without a token, also reads (401 with WWW-Authenticate: Bearer)', async () => {
      const { id } = await createAsAdmin('ticket', { subject: 'auth' });
      const anonymous = client(service.url);
      expectUnauthenticated(await anonymous.get('/models/ticket/'));
      expectUnauthenticated(await anonymous.get(`/models/ticket/${id}`));
      expectUnauthenticated(await anonymous.post('/models/ticket/', { subject: 'x' }));
      expectUnauthenticated(await anonymous.patch(`/models/ticket/${id}`, { subject: 'x' }));
      expectUnauthenticated(await anonymous.delete(`/models/ticket/${id}`));
      expectUnauthenticated(await client(service.url, 'not-a-token').get('/models/ticket/'));
      expect((await admin().get(`/models/ticket/${id}`)).body.subject).to.equal('auth');
    });

    it('needs the (overridden) scope of each operation; the default {model}:* names do not count once overridden', async () => {
      const user = people.ticketUser!;
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, 'no roles', user.token, []);
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, 'ticket:* scopes', await grantRole(service.url, adminToken, user, 't-default'), []);
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, '+tickets:read', await grantRole(service.url, adminToken, user, 't-read'), [
        'list',
        'read',
      ]);
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, '+tickets:delete', await grantRole(service.url, adminToken, user, 't-delete'), [
        'list',
        'read',
        'delete',
      ]);
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, '+tickets:write', await grantRole(service.url, adminToken, user, 't-write'), OPERATIONS);
      await checkMatrix('ticket', 'tickets', { subject: 'matrix' }, 'admin', adminToken, OPERATIONS);
    });

    it('needs scope AND group when groups are declared; write cascades from read_groups, delete_groups stands alone; iam:admin bypasses', async () => {
      const scoped = people.secretUser!;
      const lead = people.leadUser!;
      await checkMatrix('secret', 'secrets', { title: 'matrix' }, 'scopes, no group', scoped.token, []);
      await checkMatrix('secret', 'secrets', { title: 'matrix' }, 'group leads, no scope', lead.token, []);
      await checkMatrix('secret', 'secrets', { title: 'matrix' }, 'scopes + agents', await grantRole(service.url, adminToken, scoped, 'agents'), [
        'list',
        'read',
        'create',
        'update',
      ]);
      await checkMatrix('secret', 'secrets', { title: 'matrix' }, 'scopes + leads', await grantRole(service.url, adminToken, lead, 's-scopes'), OPERATIONS);
      await checkMatrix('secret', 'secrets', { title: 'matrix' }, 'admin', adminToken, OPERATIONS);
    });

    it('keeps /admin/models, /admin/scopes, toggles and forks to iam:admin (403 for a CRUD-only user)', async () => {
      const as = client(service.url, people.leadUser!.token);
      expectError(await as.get('/admin/models'), 403, 'PERMISSION_DENIED');
      expectError(await as.get('/admin/scopes'), 403, 'PERMISSION_DENIED');
      expectError(await as.patch('/admin/models/Ticket/v1/toggle'), 403, 'PERMISSION_DENIED');
      expectError(await as.post('/admin/models/Ticket/v1/fork', { new_version: 'v2' }), 403, 'PERMISSION_DENIED');
      expect(
        (await admin().get('/admin/models')).body.Ticket.map((v: { schema_version: string; enabled: boolean }) => [v.schema_version, v.enabled]),
      ).to.deep.equal([['v1', true]]);
    });

    it('serves only the operations a model lists in spec.api.crud (others 404), and no route at all without it', async () => {
      const note = admin();
      expect((await note.get('/models/note/')).status).to.equal(200);
      expectError(await note.get(`/models/note/${ABSENT_ID}`), 404, 'NOT_FOUND');
      expectError(await note.post('/models/note/', { text: 'x' }), 404, 'NOT_FOUND');
      expectError(await note.patch(`/models/note/${ABSENT_ID}`, { text: 'x' }), 404, 'NOT_FOUND');
      expectError(await note.delete(`/models/note/${ABSENT_ID}`), 404, 'NOT_FOUND');
      expect(await rowCount('notes')).to.equal(0);
      for (const result of [
        await note.get('/models/hidden/'),
        await note.get(`/models/hidden/${ABSENT_ID}`),
        await note.post('/models/hidden/', { text: 'x' }),
        await note.patch(`/models/hidden/${ABSENT_ID}`, { text: 'x' }),
        await note.delete(`/models/hidden/${ABSENT_ID}`),
        await note.get('/models/nosuchmodel/'),
        await note.get('/models/Ticket/'),
        await note.get('/api/ticket'),
      ]) {
        expectError(result, 404);
      }
      expect(await rowCount('hiddens')).to.equal(0);
    });
  });

  describe('records', () => {
    it('creates (201, the read variant with service-filled id and timestamps), reads, patches only present fields, deletes (204)', async () => {
      const created = await admin().post('/models/ticket/', { subject: 'printer on fire', priority: 2, labels: { floor: 3 }, due: '2024-05-01' });
      expect(created.status).to.equal(201);
      const record = created.body;
      expect(Object.keys(record)).to.have.members([
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
      expect(record.id).to.match(UUID);
      expect(record.created_at).to.match(ISO_TIMESTAMP);
      expect(record).to.deep.include({ subject: 'printer on fire', priority: 2, labels: { floor: 3 }, due: '2024-05-01', body: null, status: null });
      expect(record).to.not.have.property('svc_tenant');

      const read = await admin().get(`/models/ticket/${record.id}`);
      expect(read.status).to.equal(200);
      expect(read.body).to.deep.equal(record);

      const patched = await admin().patch(`/models/ticket/${record.id}`, { status: 'closed', body: null });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body).to.deep.include({ id: record.id, subject: 'printer on fire', priority: 2, status: 'closed', created_at: record.created_at });
      expect(Date.parse(patched.body.updated_at)).to.be.at.least(Date.parse(record.updated_at));
      expect((await admin().get(`/models/ticket/${record.id}`)).body).to.deep.equal(patched.body);

      const deleted = await admin().delete(`/models/ticket/${record.id}`);
      expect(deleted.status).to.equal(204);
      expect(deleted.body).to.equal(null);
      expectError(await admin().get(`/models/ticket/${record.id}`), 404, 'NOT_FOUND');
      expectError(await admin().patch(`/models/ticket/${record.id}`, { subject: 'again' }), 404, 'NOT_FOUND');
      expectError(await admin().delete(`/models/ticket/${record.id}`), 404, 'NOT_FOUND');
    });

    it('answers 404 for absent records and for ids that are not uuids, on read, update and delete', async () => {
      for (const id of [ABSENT_ID, 'not-a-uuid', '1', "1' OR '1'='1", '00000000-0000-4000-8000-00000000000Z']) {
        const encoded = encodeURIComponent(id);
        expectError(await admin().get(`/models/ticket/${encoded}`), 404, 'NOT_FOUND');
        expectError(await admin().patch(`/models/ticket/${encoded}`, { subject: 'x' }), 404, 'NOT_FOUND');
        expectError(await admin().delete(`/models/ticket/${encoded}`), 404, 'NOT_FOUND');
      }
    });

    it('answers 422 with detail entries for missing, mistyped and unknown fields, and writes nothing', async () => {
      const before = await rowCount('tickets');
      const post = (body: unknown) => admin().post('/models/ticket/', body);
      const detailOf = async (body: unknown) => {
        const result = await post(body);
        expect(result.status, JSON.stringify(result.body)).to.equal(422);
        return result.body.detail as { loc: unknown[]; msg: string; type: string }[];
      };
      expect(await detailOf({})).to.deep.equal([{ loc: ['body', 'subject'], msg: 'Field required', type: 'missing' }]);
      expect(await detailOf({ subject: 5 })).to.deep.equal([{ loc: ['body', 'subject'], msg: 'Input should be a valid string', type: 'string_type' }]);
      const many = await detailOf({
        subject: 'x',
        priority: 'high',
        score: 'much',
        urgent: 'yes',
        customer_id: 'nope',
        due: 'tomorrow',
        status: 'lost',
        labels: [1],
        bogus: 1,
        id: ABSENT_ID,
        created_at: '2024-01-01T00:00:00Z',
      });
      const byField = Object.fromEntries(many.map((d) => [d.loc.join('.'), d.type]));
      expect(byField).to.deep.include({
        'body.priority': 'int_type',
        'body.score': 'float_type',
        'body.urgent': 'bool_type',
        'body.customer_id': 'uuid_parsing',
        'body.due': 'date_parsing',
        'body.status': 'enum',
        'body.labels': 'dict_type',
        'body.bogus': 'extra_forbidden',
        'body.id': 'extra_forbidden',
        'body.created_at': 'extra_forbidden',
      });
      expect((await post([{ subject: 'x' }])).status).to.equal(422);
      expect((await admin().post('/models/ticket/', '{"subject": "x",')).status).to.equal(400);
      expect(await rowCount('tickets')).to.equal(before);
    });

    it('refuses __proto__, constructor and prototype keys anywhere in the body with 400', async () => {
      const before = await rowCount('tickets');
      const { id } = await createAsAdmin('ticket', { subject: 'proto' });
      for (const raw of [
        '{"subject": "x", "__proto__": {"isAdmin": true}}',
        '{"subject": "x", "labels": {"__proto__": {"polluted": 1}}}',
        '{"subject": "x", "labels": {"constructor": {"prototype": {"polluted": 1}}}}',
      ]) {
        expectError(await admin().post('/models/ticket/', raw), 400, 'BAD_REQUEST');
        expectError(await admin().patch(`/models/ticket/${id}`, raw), 400, 'BAD_REQUEST');
      }
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      expect(await rowCount('tickets')).to.equal(before + 1);
      expect((await admin().get(`/models/ticket/${id}`)).body.subject).to.equal('proto');
    });

    it('refuses a PATCH of read-only fields (id, created_at, updated_at) with 422 and writes nothing', async () => {
      const record = await createAsAdmin('ticket', { subject: 'read-only' });
      const eventsOf = async () =>
        (await service.kernel.pool.query('SELECT count(*)::int AS n FROM events WHERE stream_id = $1', [`record-ticket-${record.id}`])).rows[0].n;
      const before = await eventsOf();
      for (const body of [
        { id: ABSENT_ID },
        { created_at: '2020-01-01T00:00:00Z' },
        { updated_at: '2020-01-01T00:00:00Z' },
        { subject: 'changed', id: ABSENT_ID },
      ]) {
        const result = await admin().patch(`/models/ticket/${record.id}`, body);
        expect(result.status, JSON.stringify(result.body)).to.equal(422);
        expect(result.body.detail.map((d: { type: string }) => d.type)).to.include('extra_forbidden');
      }
      expect(await eventsOf()).to.equal(before);
      expect((await admin().get(`/models/ticket/${record.id}`)).body).to.deep.equal(record);
      expect((await admin().get(`/models/ticket/${ABSENT_ID}`)).status).to.equal(404);
    });
    it('answers 422 for NUL characters, integers beyond ±(2^53−1) and year-0 dates on POST and PATCH, and appends no event', async () => {
      const record = await createAsAdmin('ticket', { subject: 'bad input' });
      const before = await recordEvents();
      const bodies: unknown[] = [
        { subject: 'a\u0000b' },
        { subject: 'x', body: '\u0000' },
        { subject: 'x', labels: { note: 'a\u0000b' } },
        { subject: 'x', labels: { 'a\u0000b': 1 } },
        { subject: 'x', labels: { deep: [{ k: '\u0000' }] } },
        { subject: 'x', priority: 1e20 },
        { subject: 'x', priority: -1e20 },
        { subject: 'x', priority: 2 ** 53 },
        { subject: 'x', due: '0000-01-01' },
        '{"subject": "x", "priority": 1e20}',
        '{"subject": "a\\u0000b"}',
      ];
      for (const body of bodies) {
        for (const result of [await admin().post('/models/ticket/', body), await admin().patch(`/models/ticket/${record.id}`, body)]) {
          expect(result.status, `${JSON.stringify(body)}: ${JSON.stringify(result.body)}`).to.equal(422);
          expect(result.body.detail, JSON.stringify(body)).to.be.an('array').that.is.not.empty;
        }
      }
      const nul = await admin().post('/models/ticket/', { subject: 'a\u0000b' });
      expect(nul.body.detail).to.deep.equal([{ loc: ['body', 'subject'], msg: 'String should not contain the NUL character (U+0000)', type: 'value_error' }]);
      expect((await admin().post('/models/ticket/', { subject: 'x', priority: 1e20 })).body.detail[0]).to.deep.include({
        loc: ['body', 'priority'],
        type: 'less_than_equal',
      });
      expect(await recordEvents()).to.equal(before);
      expect((await admin().get(`/models/ticket/${record.id}`)).body).to.deep.equal(record);
      // The limits themselves are fine.
      const edge = await admin().post('/models/ticket/', { subject: 'edge', priority: -Number.MAX_SAFE_INTEGER, due: '0001-01-01' });
      expect(edge.status, JSON.stringify(edge.body)).to.equal(201);
      expect(edge.body).to.deep.include({ priority: -Number.MAX_SAFE_INTEGER, due: '0001-01-01' });
    });

    it('maps a PostgreSQL data exception (SQLSTATE class 22) that validation let through to 400, at the one error map', async () => {
      const refused = await service.kernel.pool.query(`SELECT '0000-01-01'::date`).catch((error: unknown) => error);
      const mapped = toAppError(refused);
      expect(mapped.code).to.equal('BAD_REQUEST');
      expect(mapped.fields).to.deep.equal({ sqlstate: '22008' });
      const other = await service.kernel.pool.query('SELECT * FROM no_such_table').catch((error: unknown) => error);
      expect(toAppError(other).code).to.equal('INTERNAL');
    });

    it('refuses a PATCH setting a required field to null (422, no RecordUpdated); optional fields still take null', async () => {
      const record = await createAsAdmin('ticket', { subject: 'keep me', body: 'some text' });
      const before = await recordEvents();
      const result = await admin().patch(`/models/ticket/${record.id}`, { subject: null });
      expect(result.status, JSON.stringify(result.body)).to.equal(422);
      expect(result.body.detail).to.deep.equal([{ loc: ['body', 'subject'], msg: 'Input should be a valid string', type: 'string_type' }]);
      expect((await admin().patch(`/models/ticket/${record.id}`, { subject: null, body: null })).status).to.equal(422);
      expect(await recordEvents()).to.equal(before);
      expect((await admin().get(`/models/ticket/${record.id}`)).body).to.deep.equal(record);
      const cleared = await admin().patch(`/models/ticket/${record.id}`, { body: null });
      expect(cleared.status).to.equal(200);
      expect(cleared.body).to.deep.include({ subject: 'keep me', body: null });
    });

    it('applies concurrent PATCHes of different fields one after the other: all 200, every change kept', async () => {
      const updatesOf = async (id: string) =>
        (await service.kernel.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type = 'RecordUpdated'`, [`record-ticket-${id}`]))
          .rows[0].n;
      const rounds: Record<string, unknown>[][] = [
        ...Array.from({ length: 6 }, (_, i) => [{ status: 'pending' }, { priority: i }]),
        [{ status: 'closed' }, { priority: 9 }, { urgent: true }, { body: 'six at once' }, { score: 0.5 }, { due: '2024-07-01' }],
      ];
      for (const changes of rounds) {
        const record = await createAsAdmin('ticket', { subject: 'race' });
        const results = await Promise.all(changes.map((change) => admin().patch(`/models/ticket/${record.id}`, change)));
        expect(
          results.map((r) => r.status),
          JSON.stringify(results.map((r) => r.body)),
        ).to.deep.equal(changes.map(() => 200));
        expect((await admin().get(`/models/ticket/${record.id}`)).body).to.deep.include(Object.assign({ subject: 'race' }, ...changes));
        expect(await updatesOf(record.id)).to.equal(changes.length);
      }
    });
  });

  describe('list', () => {
    const ids: string[] = [];
    let customerId: string;
    let filtered: Record<string, any>[];

    before(async function () {
      this.timeout(30_000);
      const existing = (await admin().get('/models/ticket/?limit=1000')).body as { id: string }[];
      await Promise.all(existing.map((t) => admin().delete(`/models/ticket/${t.id}`)));
      customerId = (await createAsAdmin('customer', { name: 'Filter Corp' })).id;
      filtered = [
        await createAsAdmin('ticket', { subject: 'alpha', priority: 3, score: 1.5, urgent: true, status: 'open', due: '2024-05-01', customer_id: customerId }),
        await createAsAdmin('ticket', { subject: 'beta', priority: 3, score: 2.5, urgent: false, status: 'closed', due: '2024-06-01' }),
        await createAsAdmin('ticket', { subject: 'gamma', priority: 7, urgent: true, status: 'closed', due: '2024-05-01', customer_id: customerId }),
      ];
      for (let batch = 0; batch < 6; batch++) {
        const made = await Promise.all(Array.from({ length: 17 }, (_, i) => createAsAdmin('ticket', { subject: `bulk ${batch}-${i}`, priority: 100 })));
        ids.push(...made.map((t) => t.id));
      }
      ids.push(...filtered.map((t) => t.id));
      ids.sort();
    });

    it('answers 100 records by default, up to limit=1000, ordered and paged by offset', async () => {
      expect(ids).to.have.length(105);
      const page = await admin().get('/models/ticket/');
      expect(page.status).to.equal(200);
      expect(page.body.map((t: { id: string }) => t.id)).to.deep.equal(ids.slice(0, 100));
      expect((await admin().get('/models/ticket/?limit=1000')).body).to.have.length(105);
      const second = await admin().get('/models/ticket/?limit=10&offset=100');
      expect(second.body.map((t: { id: string }) => t.id)).to.deep.equal(ids.slice(100));
      expect((await admin().get('/models/ticket/?offset=105')).body).to.deep.equal([]);
      expect((await admin().get('/models/ticket/?limit=1&offset=7')).body.map((t: { id: string }) => t.id)).to.deep.equal([ids[7]]);
    });

    it('answers 422 for limit 0, -1, 1001, abc, 1.5, for a negative offset and for unknown query parameters', async () => {
      for (const query of [
        'limit=0',
        'limit=-1',
        'limit=1001',
        'limit=abc',
        'limit=1.5',
        'limit=',
        'offset=-1',
        'offset=x',
        'limit=1&limit=2',
        'foo=1',
        'subject=alpha',
        'filter=alpha',
        'filter[subject][$ne]=x',
      ]) {
        const result = await admin().get(`/models/ticket/?${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body)}`).to.equal(422);
        expect(result.body.detail, query).to.be.an('array').that.is.not.empty;
      }
      const limit = await admin().get('/models/ticket/?limit=1001');
      expect(limit.body.detail[0]).to.deep.include({ loc: ['query', 'limit'] });
    });

    it('filters by typed values: string, integer, float, boolean, uuid, enum, date, timestamp; several filters AND', async () => {
      const subjects = async (query: string) => {
        const result = await admin().get(`/models/ticket/?limit=1000&${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body)}`).to.equal(200);
        return result.body.map((t: { subject: string }) => t.subject).sort();
      };
      expect(await subjects('filter[subject]=alpha')).to.deep.equal(['alpha']);
      expect(await subjects('filter[priority]=3')).to.deep.equal(['alpha', 'beta']);
      expect(await subjects('filter[score]=2.5')).to.deep.equal(['beta']);
      expect(await subjects('filter[urgent]=true')).to.deep.equal(['alpha', 'gamma']);
      expect(await subjects('filter[urgent]=false')).to.deep.equal(['beta']);
      expect(await subjects(`filter[customer_id]=${customerId}`)).to.deep.equal(['alpha', 'gamma']);
      expect(await subjects('filter[status]=closed')).to.deep.equal(['beta', 'gamma']);
      expect(await subjects('filter[due]=2024-05-01')).to.deep.equal(['alpha', 'gamma']);
      expect(await subjects(`filter[id]=${filtered[1]!.id}`)).to.deep.equal(['beta']);
      expect(await subjects(`filter[created_at]=${encodeURIComponent(filtered[2]!.created_at)}`)).to.deep.equal(['gamma']);
      expect(await subjects('filter[priority]=3&filter[status]=closed')).to.deep.equal(['beta']);
      expect(await subjects('filter[status]=pending')).to.deep.equal([]);
      expect(await subjects(`filter[created_at]=${encodeURIComponent('2024-01-01 10:00:00+02')}`)).to.deep.equal([]);
    });

    it('answers 400 for values that are not of the field type, never a 500', async () => {
      for (const query of [
        'filter[priority]=abc',
        'filter[priority]=1.5',
        'filter[priority]=99999999999999999999',
        'filter[score]=abc',
        'filter[score]=Infinity',
        'filter[urgent]=yes',
        'filter[customer_id]=nope',
        'filter[status]=lost',
        'filter[due]=2024-13-01',
        'filter[due]=2024-02-30',
        'filter[due]=tomorrow',
        'filter[created_at]=1',
        'filter[created_at]=yesterday',
        'filter[created_at]=2024-02-30T00:00:00Z',
      ]) {
        const result = await admin().get(`/models/ticket/?${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body)}`).to.equal(400);
        expect(result.body.code).to.equal('BAD_REQUEST');
      }
    });

    it('answers 400 for NUL characters, year 0 and offsets PostgreSQL refuses in filter values, never a 500, and writes nothing', async () => {
      const before = await recordEvents();
      for (const query of [
        'filter[subject]=%00',
        'filter[subject]=a%00b',
        'filter[body]=%00',
        'filter[due]=0000-01-01',
        'filter[created_at]=0000-01-01T00:00:00Z',
        'filter[created_at]=0000-01-01',
        `filter[created_at]=${encodeURIComponent('2024-01-01T00:00:00+16:00')}`,
        `filter[created_at]=${encodeURIComponent('2024-01-01T00:00:00-23:59')}`,
      ]) {
        const result = await admin().get(`/models/ticket/?${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body)}`).to.equal(400);
        expect(result.body.code).to.equal('BAD_REQUEST');
      }
      expect(
        (await admin().get(`/models/ticket/?filter[due]=0001-01-01&filter[created_at]=${encodeURIComponent('2024-01-01T00:00:00+15:59')}`)).status,
      ).to.equal(200);
      expect(await recordEvents()).to.equal(before);
    });

    it('answers 400 for __proto__, constructor and prototype filter keys and 422 for such query parameters (never a silent unfiltered 200)', async () => {
      const before = await recordEvents();
      for (const query of [
        'filter[__proto__]=x',
        'filter%5B__proto__%5D=x',
        'filter[constructor]=x',
        'filter[prototype]=x',
        'filter[subject]=alpha&filter[__proto__]=x',
      ]) {
        const result = await admin().get(`/models/ticket/?${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body).slice(0, 300)}`).to.equal(400);
        expect(result.body.detail, query).to.match(/__proto__|constructor|prototype/);
      }
      for (const query of ['__proto__=x', '__proto__[subject]=alpha', 'filter[__proto__][subject]=x', 'constructor=x']) {
        const result = await admin().get(`/models/ticket/?${query}`);
        expect(result.status, `${query}: ${JSON.stringify(result.body).slice(0, 300)}`).to.equal(422);
        expect(result.body.detail, query).to.be.an('array').that.is.not.empty;
      }
      const read = await admin().get(`/models/ticket/${filtered[0]!.id}?__proto__=x`);
      expect(read.status, JSON.stringify(read.body)).to.equal(422);
      expect(read.body.detail[0]).to.deep.include({ loc: ['query', '__proto__'], type: 'extra_forbidden' });
      expect(({} as Record<string, unknown>).subject).to.equal(undefined);
      expect(await recordEvents()).to.equal(before);
    });

    it('answers 400 for unknown and non-filterable fields (jsonb, relations)', async () => {
      for (const field of ['nosuch', 'labels', 'customer', 'svc_tenant']) {
        const result = await admin().get(`/models/ticket/?filter[${field}]=x`);
        expect(result.status, `${field}: ${JSON.stringify(result.body)}`).to.equal(400);
        expect(result.body.code).to.equal('BAD_REQUEST');
      }
    });

    it('treats SQL in filter names and values as data: a 4xx or no match, the table and rows intact', async () => {
      const fingerprint = async () =>
        (await service.kernel.pool.query(`SELECT count(*)::int AS n, md5(string_agg(t::text, '|' ORDER BY id)) AS h FROM tickets t`)).rows[0];
      const before = await fingerprint();
      const names = [
        'subject" = subject OR "1',
        'subject"; DROP TABLE tickets; --',
        'id) OR (1=1',
        "subject' OR '1'='1",
        'subject = subject; DELETE FROM tickets; --',
      ];
      for (const name of names) {
        const result = await admin().get(`/models/ticket/?filter[${encodeURIComponent(name)}]=x`);
        expect(result.status, `${name}: ${JSON.stringify(result.body)}`).to.be.within(400, 499);
      }
      for (const value of ["x' OR '1'='1", "'; DROP TABLE tickets; --", "alpha' --", '%', 'alpha%']) {
        const result = await admin().get(`/models/ticket/?filter[subject]=${encodeURIComponent(value)}`);
        expect(result.status, value).to.equal(200);
        expect(result.body, value).to.deep.equal([]);
      }
      for (const value of ['1 OR 1=1', '1; DROP TABLE tickets', '3)--']) {
        expect((await admin().get(`/models/ticket/?filter[priority]=${encodeURIComponent(value)}`)).status, value).to.equal(400);
      }
      expectError(await admin().get(`/models/ticket/?include=${encodeURIComponent('customer; DROP TABLE tickets')}`), 400);
      expect(await fingerprint()).to.deep.equal(before);
      expect(before.n).to.equal(105);
    });
  });
});
