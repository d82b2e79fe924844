// Read routing without a streaming replica: unset, nothing changes (no X-Svc-Lsn, no extra query);
// set to a server that is not in recovery (the primary itself stands in), writes are stamped and a
// read waiting for an LSN the server has not reached falls back to the primary within the bound.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { parseScrape } from '../support/prometheus.js';
import { startTestService } from '../support/service.js';

const LSN_TEXT = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

describe('read routing (SVC_READ_DATABASE_URL)', function () {
  this.timeout(60_000);
  let service: Service | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  const readsOf = async (url: string, token: string) => {
    const scraped = parseScrape((await call(url, 'GET', '/metrics', { token })).body as string);
    return (target: string, reason: string) => scraped.value('svc_replica_reads_total', { target, reason });
  };

  it('unset: writes carry no X-Svc-Lsn and every read is the primary’s, whatever the client sends', async () => {
    service = await startTestService({ projectDir: EXAMPLE_PROJECT });
    const admin = await bootstrapAdmin(service.url);
    const before = await readsOf(service.url, admin.token);
    const created = await call(service.url, 'POST', '/models/customer', { token: admin.token, json: { name: 'Ann', email: 'ann@example.com' } });
    expect(created.status).to.equal(201);
    expect(created.headers.get('x-svc-lsn')).to.equal(null);
    const list = await call(service.url, 'GET', '/models/customer', { token: admin.token, headers: { 'x-svc-lsn': 'FFFFFFFF/0' } });
    expect(list.body.map((c: { id: string }) => c.id)).to.include(created.body.id);
    const after = await readsOf(service.url, admin.token);
    for (const [target, reason] of [
      ['replica', 'current'],
      ['primary', 'lagging'],
    ] as const)
      expect(after(target, reason)).to.equal(before(target, reason));
  });

  it('set: stamps writes, reads what the LSN allows there, and falls back to the primary for an LSN never reached', async () => {
    const url = await createTestDatabase();
    service = await startTestService({ databaseUrl: url, projectDir: EXAMPLE_PROJECT, env: { SVC_READ_DATABASE_URL: url, SVC_READ_REPLICA_WAIT_MS: '100' } });
    const admin = await bootstrapAdmin(service.url);
    const before = await readsOf(service.url, admin.token);
    const created = await call(service.url, 'POST', '/models/customer', { token: admin.token, json: { name: 'Ben', email: 'ben@example.com' } });
    expect(created.status).to.equal(201);
    const lsn = created.headers.get('x-svc-lsn');
    expect(lsn).to.match(LSN_TEXT);
    const triggered = await call(service.url, 'POST', '/api/hello', { json: { name: 'ben', values: [1] } });
    expect(triggered.status).to.equal(201);
    expect(triggered.headers.get('x-svc-lsn'), 'an anonymous write is stamped too').to.match(LSN_TEXT);

    for (const header of [lsn!, 'not an lsn', 'FFFFFFFF/0']) {
      const list = await call(service.url, 'GET', '/models/customer', { token: admin.token, headers: { 'x-svc-lsn': header } });
      expect(list.status, header).to.equal(200);
      expect(list.body.map((c: { id: string }) => c.id)).to.include(created.body.id);
    }
    const run = await call(service.url, 'GET', `/api/runs/${triggered.headers.get('x-svc-run-id')}`, { token: admin.token });
    expect(run.body.status).to.equal('completed');
    const after = await readsOf(service.url, admin.token);
    expect(after('primary', 'lagging') - before('primary', 'lagging'), 'FFFFFFFF/0 is never reached').to.equal(1);
    expect(after('replica', 'current') + after('replica', 'waited') - before('replica', 'current') - before('replica', 'waited')).to.be.at.least(3);
    expect((await call(service.url, 'GET', '/health')).status).to.equal(200);
  });
});
