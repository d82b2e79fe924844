// Multi-tenant deployments (SVC_TENANT_IDS): a record of another tenant is 404 everywhere and never listed or embedded.
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { FIXTURES } from './helpers.js';

describe('model records across tenants', () => {
  let service: Service;
  let t1Token: string;
  let t2Token: string;
  let t1Ticket: Record<string, any>;
  let t1Customer: Record<string, any>;
  let t2Ticket: Record<string, any>;

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: path.join(FIXTURES, 'shop'), env: { SVC_TENANT_IDS: 't1,t2' } });
    const boot = await call(service.url, 'POST', '/auth/bootstrap', { json: { email: 'root@t1.example.com', password: 'root-password', tenant: 't1' } });
    expect(boot.status, JSON.stringify(boot.body)).to.equal(200);
    t1Token = boot.body.access_token;
    const t2User = await createUser(
      service.url,
      t1Token,
      'agent@t2.example.com',
      { 't2-agents': ['tickets:read', 'tickets:write', 'tickets:delete', 'customer:read'] },
      { tenant: 't2' },
    );
    t2Token = t2User.token;
    const t1 = client(service.url, t1Token);
    t1Customer = (await t1.post('/models/customer/', { name: 'Tenant One Ltd' })).body;
    t1Ticket = (await t1.post('/models/ticket/', { subject: 'from t1', customer_id: t1Customer.id })).body;
    const created = await client(service.url, t2Token).post('/models/ticket/', { subject: 'from t2', customer_id: t1Customer.id });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    t2Ticket = created.body;
  });
  after(async () => {
    await service?.close();
  });

  it('stores the tenant with each row and in the creating event', async () => {
    const { rows } = await service.kernel.pool.query('SELECT subject, svc_tenant FROM tickets ORDER BY subject');
    expect(rows).to.deep.equal([
      { subject: 'from t1', svc_tenant: 't1' },
      { subject: 'from t2', svc_tenant: 't2' },
    ]);
    const { rows: events } = await service.kernel.pool.query(`SELECT data->>'tenant' AS tenant FROM events WHERE stream_id = $1`, [
      `record-ticket-${t2Ticket.id}`,
    ]);
    expect(events).to.deep.equal([{ tenant: 't2' }]);
  });

  it('lists only the caller tenant records, also with a filter naming the other one', async () => {
    const t2 = client(service.url, t2Token);
    expect((await t2.get('/models/ticket/')).body.map((t: { subject: string }) => t.subject)).to.deep.equal(['from t2']);
    expect((await client(service.url, t1Token).get('/models/ticket/')).body.map((t: { subject: string }) => t.subject)).to.deep.equal(['from t1']);
    expect((await t2.get(`/models/ticket/?filter[id]=${t1Ticket.id}`)).body).to.deep.equal([]);
  });

  it('answers 404 for another tenant record on read, update and delete, and changes nothing (iam:admin included)', async () => {
    const t2 = client(service.url, t2Token);
    expectError(await t2.get(`/models/ticket/${t1Ticket.id}`), 404, 'NOT_FOUND');
    expectError(await t2.patch(`/models/ticket/${t1Ticket.id}`, { subject: 'hijacked' }), 404, 'NOT_FOUND');
    expectError(await t2.delete(`/models/ticket/${t1Ticket.id}`), 404, 'NOT_FOUND');
    const t1 = client(service.url, t1Token);
    expectError(await t1.get(`/models/ticket/${t2Ticket.id}`), 404, 'NOT_FOUND');
    expectError(await t1.patch(`/models/ticket/${t2Ticket.id}`, { subject: 'hijacked' }), 404, 'NOT_FOUND');
    expectError(await t1.delete(`/models/ticket/${t2Ticket.id}`), 404, 'NOT_FOUND');
    expect((await t1.get(`/models/ticket/${t1Ticket.id}`)).body).to.deep.equal(t1Ticket);
    expect((await t2.get(`/models/ticket/${t2Ticket.id}`)).body).to.deep.equal(t2Ticket);
  });

  it('never embeds another tenant record through include', async () => {
    const t2 = await client(service.url, t2Token).get(`/models/ticket/${t2Ticket.id}?include=customer`);
    expect(t2.status).to.equal(200);
    expect(t2.body.customer).to.equal(null);
    const t1 = await client(service.url, t1Token).get(`/models/customer/${t1Customer.id}?include=tickets`);
    expect(t1.body.tickets.map((t: { subject: string }) => t.subject)).to.deep.equal(['from t1']);
  });
});
