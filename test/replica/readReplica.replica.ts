// `npm run test:replica`: svc on a real streaming replica (SVC_READ_DATABASE_URL) made on loopback.
// Runs, records, the audit log and SSE read from the replica, and a client never reads older than its
// own last write, even right after it through a replica whose replay is paused.
import { expect } from 'chai';
import { SvcClient } from '../../src/client/index.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { parseScrape } from '../support/prometheus.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { readSse, SseReader } from '../support/sse.js';
import { createUser } from '../support/users.js';
import { StreamingCluster } from './streamingCluster.js';

const LSN_HEADER = 'x-svc-lsn';
const LSN_TEXT = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

interface Answer {
  status: number;
  /** The answer's JSON. `any`: tests read its fields unchecked. */
  body: any;
  lsn: string | null;
  headers: Headers;
}

describe('read replica (SVC_READ_DATABASE_URL) on a real streaming replica', function () {
  this.timeout(120_000);
  let cluster: StreamingCluster;
  let databases: { primary: string; replica: string };
  /** Waits 300 ms for the replica, then reads the primary. */
  let service: ServiceProcess;
  /** Waits up to 30 s for the replica. */
  let patient: ServiceProcess;
  let token: string;

  const call = async (
    base: ServiceProcess,
    method: string,
    path: string,
    options: { body?: unknown; lsn?: string | null; token?: string } = {},
  ): Promise<Answer> => {
    const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? token}` };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.lsn) headers[LSN_HEADER] = options.lsn;
    const response = await fetch(`${base.url}${path}`, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null, lsn: response.headers.get(LSN_HEADER), headers: response.headers };
  };
  /** Where base's reads went so far, from its /metrics. */
  const readsBy = async (base: ServiceProcess) => {
    const scraped = parseScrape(await (await fetch(`${base.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text());
    return (target: string, reason: string) => scraped.value('svc_replica_reads_total', { target, reason });
  };
  const onReplica = async <R>(sql: string, values: unknown[] = []) => cluster.query<R & Record<string, unknown>>(databases.replica, sql, values);

  before(async function () {
    this.timeout(300_000);
    cluster = await StreamingCluster.start();
    databases = await cluster.createDatabase('svc');
    const env = { SVC_READ_DATABASE_URL: databases.replica, SVC_READ_REPLICA_WAIT_MS: '300' };
    service = await ServiceProcess.start(databases.primary, EXAMPLE_PROJECT, env);
    patient = await ServiceProcess.start(databases.primary, EXAMPLE_PROJECT, { ...env, SVC_READ_REPLICA_WAIT_MS: '30000' });
    const bootstrap = await fetch(`${service.url}/auth/bootstrap`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'root@example.com', password: 'root-password-1' }),
    });
    expect(bootstrap.status).to.equal(200);
    token = ((await bootstrap.json()) as { access_token: string }).access_token;
    await cluster.waitForReplay();
  });

  afterEach(async () => {
    // A failed test must not leave the next one a paused replica.
    await cluster?.resumeReplay().catch(() => undefined);
  });

  after(async function () {
    this.timeout(60_000);
    await killAllServices();
    await cluster?.stop();
  });

  it('stamps every write with the primary LSN and reads runs, records and the audit log from a replica that has it', async () => {
    const client = new SvcClient({ baseUrl: service.url, token });
    const created = await client.crud<{ id: string; name: string; email: string }>('customer').create({ name: 'Ada', email: 'ada@example.com' });
    const triggered = await call(service, 'POST', '/api/hello', { body: { name: 'ada', values: [1, 2] } });
    expect(triggered.status).to.equal(201);
    expect(triggered.lsn).to.match(LSN_TEXT);
    const runId = triggered.headers.get('x-svc-run-id')!;
    await cluster.waitForReplay();

    const before = await readsBy(service);
    expect((await client.crud<{ id: string }>('customer').list()).map((c) => c.id)).to.include(created.id);
    expect((await client.crud<{ id: string; name: string }>('customer').get(created.id)).name).to.equal('Ada');
    expect((await client.runs.get(runId)).status).to.equal('completed');
    expect((await client.runs.list({ workflow: 'hello' })).map((r) => r.id)).to.include(runId);
    const page = await call(service, 'GET', `/admin/events?stream_id=run-${runId}`);
    expect(page.body.events.map((e: { type: string }) => e.type)).to.include('run_completed');
    const after = await readsBy(service);
    expect(after('replica', 'current') + after('replica', 'waited') - before('replica', 'current') - before('replica', 'waited')).to.be.at.least(5);
    expect(after('primary', 'lagging')).to.equal(before('primary', 'lagging'));
  });

  it('reads a write right after it through a lagging replica: the primary answers when the replica does not catch up in time', async () => {
    await cluster.pauseReplay();
    const created = await call(service, 'POST', '/models/customer', { body: { name: 'Bob', email: 'bob@example.com' } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.lsn).to.match(LSN_TEXT);
    const id = created.body.id as string;
    expect(await onReplica('SELECT 1 FROM customers WHERE id = $1', [id]), 'the replica lags').to.have.length(0);

    const before = await readsBy(service);
    // The LSN echoed (as the TypeScript client does), and without it: this process remembers the principal's.
    for (const lsn of [created.lsn, null]) {
      const list = await call(service, 'GET', '/models/customer?limit=1000', { lsn });
      expect(list.body.map((c: { id: string }) => c.id)).to.include(id);
      expect((await call(service, 'GET', `/models/customer/${id}`, { lsn })).body.name).to.equal('Bob');
    }
    const client = new SvcClient({ baseUrl: service.url, token });
    const second = await client.crud<{ id: string; name: string; email: string }>('customer').create({ name: 'Cy', email: 'cy@example.com' });
    expect((await client.crud<{ id: string }>('customer').list({ limit: 1000 })).map((c) => c.id)).to.include(second.id);

    const triggered = await call(service, 'POST', '/api/hello', { body: { name: 'lag', values: [3] } });
    expect(triggered.status).to.equal(201);
    const runId = triggered.headers.get('x-svc-run-id')!;
    expect(await onReplica('SELECT 1 FROM svc_runs WHERE id = $1', [runId]), 'the replica lags').to.have.length(0);
    expect((await call(service, 'GET', `/api/runs/${runId}`, { lsn: triggered.lsn })).body.status).to.equal('completed');
    const replay = await readSse(`${service.url}/api/runs/${runId}/events?follow=false`, { token, headers: { [LSN_HEADER]: triggered.lsn! } });
    expect(replay.frames.map((f) => f.event)).to.include('run_completed');
    const audit = await call(service, 'GET', `/admin/events?stream_id=run-${runId}`, { lsn: triggered.lsn });
    expect(audit.body.events.map((e: { type: string }) => e.type)).to.include('run_completed');

    const after = await readsBy(service);
    expect(after('primary', 'lagging') - before('primary', 'lagging')).to.be.at.least(6);
  });

  it('waits for a lagging replica that replays the write within SVC_READ_REPLICA_WAIT_MS, on another process than the write', async () => {
    await cluster.pauseReplay();
    // Written through one process, read through another: only the echoed X-Svc-Lsn tells it of the write.
    const created = await call(service, 'POST', '/models/customer', { body: { name: 'Dee', email: 'dee@example.com' } });
    expect(created.status).to.equal(201);
    const before = await readsBy(patient);
    let isAnswered = false;
    const list = call(patient, 'GET', '/models/customer?limit=1000', { lsn: created.lsn }).finally(() => (isAnswered = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(isAnswered, 'the read waits while replay is paused').to.equal(false);
    await cluster.resumeReplay();
    expect((await list).body.map((c: { id: string }) => c.id)).to.include(created.body.id);
    const after = await readsBy(patient);
    expect(after('replica', 'waited') - before('replica', 'waited')).to.be.at.least(1);
    expect(after('primary', 'lagging')).to.equal(before('primary', 'lagging'));
  });

  it('follows a run and the audit log over SSE: the catch-up on the replica, the rest live, nothing lost or twice', async () => {
    const started = await call(service, 'POST', '/api/cool-off?wait=false', { body: { name: 'eve' } });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const runId = started.body.id as string;
    await cluster.waitForReplay();
    const headers = { [LSN_HEADER]: started.lsn ?? '' };
    const journal = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token, headers });
    const log = await SseReader.open(`${service.url}/admin/events/stream?stream_id=run-${runId}`, { token, headers });
    await journal.until('run_completed', 30_000);
    await log.until('run_completed', 30_000);
    const seqs = journal.frames.map((frame) => Number(frame.id));
    expect(seqs).to.deep.equal(seqs.map((_, index) => index + 1));
    const positions = log.frames.map((frame) => frame.data.stream_position as number);
    expect(positions).to.deep.equal(positions.map((_, index) => index + 1));
    expect(positions.length).to.equal(seqs.length);
    journal.close();
    log.close();
  });

  it('reads the gated global log on the standby: pg_current_snapshot works there, and its horizon is a prefix of the primary', async () => {
    await cluster.waitForReplay();
    const [replica] = await onReplica<{ in_recovery: boolean; xmin: string }>(
      'SELECT pg_is_in_recovery() AS in_recovery, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin',
    );
    expect(replica!.in_recovery).to.equal(true);
    const full = await call(service, 'GET', '/admin/events?limit=1000');
    expect(full.status).to.equal(200);
    const fromReplica = await onReplica<{ global_position: number }>(
      'SELECT global_position FROM events WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot()) ORDER BY transaction_id, global_position LIMIT 1000',
    );
    const fromService = (full.body.events as { global_position: number }[]).map((e) => e.global_position);
    expect(fromService.slice(0, fromReplica.length)).to.deep.equal(fromReplica.map((row) => Number(row.global_position)).slice(0, fromService.length));
  });

  // Last: it stops the replica.
  it('keeps answering when the replica goes away: every read goes to the primary', async () => {
    const created = await call(service, 'POST', '/models/customer', { body: { name: 'Fay', email: 'fay@example.com' } });
    expect(created.status).to.equal(201);
    const reader = await createUser(service.url, token, 'reader@example.com', { readers: ['runs:read'] });
    await cluster.stopReplica();
    const before = await readsBy(service);
    const list = await call(service, 'GET', '/models/customer?limit=1000', { lsn: created.lsn });
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.body.map((c: { id: string }) => c.id)).to.include(created.body.id);
    // A principal with no write remembered, sending no LSN: its read goes to the replica, fails there, and the primary answers.
    const runs = await call(service, 'GET', '/api/runs', { token: reader.token });
    expect(runs.status, JSON.stringify(runs.body)).to.equal(200);
    const page = await call(service, 'GET', '/admin/events?limit=10');
    expect(page.status).to.equal(200);
    const after = await readsBy(service);
    expect(after('primary', 'unavailable') - before('primary', 'unavailable')).to.be.at.least(3);
  });
});
