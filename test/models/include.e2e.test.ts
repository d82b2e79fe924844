// include= embeds relations in batch: one statement per relation whatever the page size, counted at the wire.
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { FIXTURES, grantRole, startCountingProxy, type CountingProxy } from './helpers.js';

const TOUCHES_MODEL_TABLES = /"(customers|tickets)"/;

describe('include= on model CRUD reads', () => {
  let proxy: CountingProxy;
  let service: Service;
  let adminToken: string;
  const customers: Record<string, any>[] = [];
  const tickets: Record<string, any>[] = [];
  const admin = () => client(service.url, adminToken);

  before(async function () {
    this.timeout(60_000);
    proxy = await startCountingProxy(await createTestDatabase());
    service = await startTestService({ databaseUrl: proxy.url, projectDir: path.join(FIXTURES, 'shop') });
    adminToken = (await bootstrapAdmin(service.url)).token;
    for (let batch = 0; batch < 5; batch++) {
      customers.push(
        ...(await Promise.all(Array.from({ length: 10 }, (_, i) => admin().post('/models/customer/', { name: `c${batch}-${i}` })))).map((r) => r.body),
      );
    }
    customers.sort((a, b) => a.id.localeCompare(b.id));
    // One ticket per customer except the last; one more ticket with no customer.
    for (let batch = 0; batch < 5; batch++) {
      const made = await Promise.all(
        customers
          .slice(batch * 10, batch * 10 + 10)
          .map((c, i) => admin().post('/models/ticket/', batch * 10 + i === 49 ? { subject: 'orphan' } : { subject: `t-${c.name}`, customer_id: c.id })),
      );
      tickets.push(...made.map((r) => r.body));
    }
    tickets.sort((a, b) => a.id.localeCompare(b.id));
  });
  after(async () => {
    await service?.close();
    await proxy?.close();
  });

  /** Runs a request and answers its body with the statements on the model tables it caused. */
  async function measured(pathAndQuery: string, token = adminToken) {
    const from = proxy.statements.length;
    const result = await client(service.url, token).get(pathAndQuery);
    const statements = proxy.statements.slice(from).filter((sql) => TOUCHES_MODEL_TABLES.test(sql));
    return { result, statements };
  }

  it('the proxy sees the service statements (sanity check of the counting)', async () => {
    const { result, statements } = await measured('/models/ticket/?limit=5');
    expect(result.status).to.equal(200);
    expect(statements).to.have.length(1);
    expect(statements[0]).to.match(/FROM "tickets"/);
  });

  it('many_to_one: tickets with their customer cost two statements for 5 and for 50 records', async () => {
    const small = await measured('/models/ticket/?limit=5&include=customer');
    const large = await measured('/models/ticket/?limit=50&include=customer');
    expect(small.result.status).to.equal(200);
    expect(large.result.body).to.have.length(50);
    expect(small.statements, small.statements.join('\n')).to.have.length(2);
    expect(large.statements, large.statements.join('\n')).to.have.length(2);
    expect(large.statements.filter((sql) => /FROM "customers"/.test(sql))).to.have.length(1);

    const byId = new Map(customers.map((c) => [c.id, c]));
    for (const ticket of large.result.body) {
      if (ticket.customer_id === null) expect(ticket.customer).to.equal(null);
      else expect(ticket.customer).to.deep.equal(byId.get(ticket.customer_id));
    }
    expect(large.result.body.filter((t: { customer: unknown }) => t.customer === null)).to.have.length(1);
  });

  it('one_to_many: customers with their tickets cost two statements for 5 and for 50 records', async () => {
    const small = await measured('/models/customer/?limit=5&include=tickets');
    const large = await measured('/models/customer/?limit=50&include=tickets');
    expect(small.statements, small.statements.join('\n')).to.have.length(2);
    expect(large.statements, large.statements.join('\n')).to.have.length(2);
    expect(large.result.body).to.have.length(50);
    const byCustomer = new Map<string, unknown[]>();
    for (const t of tickets) if (t.customer_id) byCustomer.set(t.customer_id, [...(byCustomer.get(t.customer_id) ?? []), t]);
    for (const customer of large.result.body) expect(customer.tickets).to.deep.equal(byCustomer.get(customer.id) ?? []);
    expect(large.result.body.filter((c: { tickets: unknown[] }) => c.tickets.length === 0)).to.have.length(1);
  });

  it('looks related records up by the key column as it is (uuid), so the foreign-key index created at boot serves it', async () => {
    const { statements } = await measured('/models/customer/?limit=5&include=tickets');
    const lookup = statements.find((sql) => /FROM "tickets"/.test(sql))!;
    expect(lookup).to.match(/WHERE "customer_id" = ANY\(\$1::uuid\[\]\)/);
    const client = await service.kernel.pool.connect();
    try {
      await client.query('BEGIN');
      // Fifty rows are cheap to scan: discourage it, so the plan shows whether the index can serve at all.
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${lookup}`, [[customers[0]!.id]]);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).to.include('"Index Name":"tickets_customer_id_idx"');
      expect(plan).to.not.include('Seq Scan');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it("lists one tenant's records in key order from the (tenant, key) index, without sorting the table", async () => {
    const { statements } = await measured('/models/customer/?limit=5');
    const list = statements.find((sql) => /FROM "customers"/.test(sql))!;
    expect(list).to.match(/"svc_tenant" IS NULL/);
    const client = await service.kernel.pool.connect();
    try {
      await client.query('BEGIN');
      // A few rows are cheap to scan and sort: penalize both, so the plan shows whether the index can give the order.
      await client.query('SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off');
      const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${list}`, [5, 0]);
      const plan = JSON.stringify(rows[0]['QUERY PLAN']);
      expect(plan).to.include('"Index Name":"customers_svc_tenant_id_idx"');
      expect(plan, plan).to.not.include('"Node Type":"Sort"');
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('embeds on a single read too, and a many_to_one to a deleted record becomes null', async () => {
    const ticket = tickets.find((t) => t.customer_id)!;
    const read = await measured(`/models/ticket/${ticket.id}?include=customer`);
    expect(read.result.status).to.equal(200);
    expect(read.result.body.customer.id).to.equal(ticket.customer_id);
    expect(read.statements).to.have.length(2);
    expect((await admin().delete(`/models/customer/${ticket.customer_id}`)).status).to.equal(204);
    expect((await admin().get(`/models/ticket/${ticket.id}?include=customer`)).body.customer).to.equal(null);
  });

  it('answers 400 for an unknown relation and 422 for unknown query parameters on a read', async () => {
    expectError(await admin().get('/models/ticket/?include=nosuch'), 400, 'BAD_REQUEST');
    expectError(await admin().get(`/models/ticket/${tickets[0]!.id}?include=customer,nosuch`), 400, 'BAD_REQUEST');
    expect((await admin().get(`/models/ticket/${tickets[0]!.id}?limit=5`)).status).to.equal(422);
  });

  it('answers 403 when the caller may read the records but not the included model', async () => {
    const reader = await createUser(service.url, adminToken, 'ticket-reader@example.com', { 't-read': ['tickets:read'] });
    expect((await measured('/models/ticket/?limit=5', reader.token)).result.status).to.equal(200);
    const denied = await measured('/models/ticket/?limit=5&include=customer', reader.token);
    expectError(denied.result, 403, 'PERMISSION_DENIED');
    expectError(await client(service.url, reader.token).get(`/models/ticket/${tickets[0]!.id}?include=customer`), 403, 'PERMISSION_DENIED');
    const allowed = await grantRole(service.url, adminToken, reader, 'c-read', ['customer:read']);
    const granted = await measured('/models/ticket/?limit=5&include=customer', allowed);
    expect(granted.result.status).to.equal(200);
    expect(granted.result.body[0]).to.have.property('customer');
  });
});
