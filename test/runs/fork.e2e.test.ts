// POST /api/runs/{id}/fork over real HTTP and PostgreSQL: a run that failed at its third of four
// outside calls, forked from that step once the fault is fixed, completes without calling steps one
// and two again (the outside API counts its calls), and the source run is untouched; the errors (404,
// 409, 403, 422); the fork through export, CLI import into a fresh database and replay; the read
// models rebuilt from the log give the same rows.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type pg from 'pg';
import { SvcClient, SvcRequestError } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { tableChecksum } from '../projections/sampleProjection.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client, expectError, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { killAllServices, LEASE_MS, PROCESS_SIGNING_KEY, runCli, ServiceProcess } from '../support/serviceProcess.js';
import { createUser } from '../support/users.js';
import { openPool } from '../durability/helpers.js';

const FORK_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/fork');

/** The outside API of the fixture's workflows: counts calls per path; a broken path answers 500 until it is fixed. */
class CountingApi {
  readonly calls: { path: string; body: unknown }[] = [];
  readonly broken = new Set(['/three', '/notify']);
  /** Paths that answer only after this many milliseconds. */
  readonly slow = new Map<string, number>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const pathname = new URL(req.url ?? '/', 'http://x').pathname;
        this.calls.push({ path: pathname, body: body ? JSON.parse(body) : null });
        const n = this.count(pathname);
        if (this.broken.has(pathname)) return answer(res, 500, { error: `${pathname} is down` });
        // Unref'd: an answer held for a caller that was killed keeps no test process alive.
        setTimeout(() => answer(res, 200, { n, path: pathname }), this.slow.get(pathname) ?? 0).unref();
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  count(pathname: string): number {
    return this.calls.filter((c) => c.path === pathname).length;
  }

  counts(): Record<string, number> {
    return Object.fromEntries(['/one', '/two', '/three', '/four'].map((p) => [p, this.count(p)]));
  }

  stop(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** An answer's bytes, nothing parsed. */
async function rawGet(url: string, token: string, accept = 'application/json'): Promise<string> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept }, signal: AbortSignal.timeout(10_000) });
  expect(response.status).to.equal(200);
  return response.text();
}

const workDir = mkdtempSync(path.join(tmpdir(), 'svc-fork-'));

describe('forking a run from a step', function () {
  this.timeout(120_000);
  const api = new CountingApi();
  const services: Service[] = [];
  const pools: pg.Pool[] = [];
  let databaseUrl: string;
  let service: Service;
  let db: pg.Pool;
  let admin: Admin;
  let source: string;
  let fork: string;
  let reviewSource: string;
  let reviewFork: string;

  const serve = async (url: string): Promise<Service> => {
    const started = await startTestService({ databaseUrl: url, projectDir: FORK_PROJECT, env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY } });
    services.push(started);
    return started;
  };
  const asAdmin = () => client(service.url, admin.token);
  const readBack = async (at: Service, token: string, runId: string) => ({
    run: await rawGet(`${at.url}/api/runs/${runId}`, token),
    events: await rawGet(`${at.url}/api/runs/${runId}/events?follow=false`, token, 'text/event-stream'),
  });
  const storedEvents = async (pool: pg.Pool, runId: string) =>
    (
      await pool.query<{ global_position: string; type: string; data: any; metadata: any }>(
        'SELECT global_position, type, data, metadata FROM events WHERE stream_id = $1 ORDER BY stream_position',
        [`run-${runId}`],
      )
    ).rows;

  before(async function () {
    this.timeout(60_000);
    await api.start();
    databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    pools.push(db);
    service = await serve(databaseUrl);
    admin = await bootstrapAdmin(service.url);
    const failed = await asAdmin().post('/api/workflows/chain/runs', { api: api.url, tag: 'first' });
    source = failed.headers.get('x-svc-run-id')!;
    const run = await waitForStatus(service.url, admin.token, source, ['completed', 'failed']);
    expect(run.status, JSON.stringify(run)).to.equal('failed');
    expect(run.current_step).to.equal('three');
    expect(api.counts()).to.deep.equal({ '/one': 1, '/two': 1, '/three': 1, '/four': 0 });
  });

  after(async () => {
    await killAllServices();
    for (const started of services) await started.close().catch(() => undefined);
    for (const pool of pools) await pool.end().catch(() => undefined);
    api.stop();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('forked from the failed step after the fault is fixed: steps one and two are not called again, the fork completes, the source is untouched', async () => {
    const sourceBefore = await readBack(service, admin.token, source);
    const sourceStored = await storedEvents(db, source);
    api.broken.delete('/three');
    const forked = await asAdmin().post(`/api/runs/${source}/fork`, { from_step: 'three', input: { tag: 'second' } });
    expect(forked.status, JSON.stringify(forked.body)).to.equal(202);
    fork = forked.body.id as string;
    expect(fork).to.not.equal(source);
    expect(forked.headers.get('location')).to.equal(`/api/runs/${fork}`);
    expect(forked.body.forked_from).to.deep.equal({ run_id: source, step_id: 'three' });
    expect(forked.body.trigger).to.deep.equal({ type: 'fork' });

    const done = await waitForStatus(service.url, admin.token, fork, ['completed', 'failed'], 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    // Steps one and two answered n = 1 in the source; their recorded answers are the fork's.
    expect(done.output).to.deep.equal({ first: 1, second: 1, third: 2, fourth: 1, tag: 'second' });
    expect(done.input).to.deep.equal({ api: api.url, tag: 'second' });
    expect(done.forked_from).to.deep.equal({ run_id: source, step_id: 'three' });
    expect(api.counts(), 'only three (again) and four were called').to.deep.equal({ '/one': 1, '/two': 1, '/three': 2, '/four': 1 });
    expect(api.calls.filter((c) => c.path === '/three').at(-1)!.body, 'the copied context and the merged input').to.deep.equal({ tag: 'second', first: 1 });

    // The fork's journal: its run_started, the source's events before three (copied), then its own.
    const stored = await storedEvents(db, fork);
    const cut = sourceStored.findIndex((e) => e.type === 'step_started' && e.data.agent_id === 'three');
    const copies = sourceStored.slice(1, cut);
    expect(stored[0]!.type).to.equal('run_started');
    expect(stored[0]!.data.payload).to.include({ trigger: 'fork', workflow: 'chain', schema_version: 'v1', first_step: 'one' });
    expect(stored[0]!.data.payload.forked_from).to.deep.equal({ run_id: source, step_id: 'three' });
    expect(stored[0]!.metadata.copied_from).to.equal(undefined);
    stored.slice(1, cut).forEach((event, i) => {
      expect(event.type).to.equal(copies[i]!.type);
      expect(event.data).to.deep.equal(copies[i]!.data);
      expect(event.metadata.copied_from).to.deep.equal({ run_id: source, global_position: Number(copies[i]!.global_position) });
    });
    const own = stored.slice(cut);
    expect(own.every((e) => e.metadata.copied_from === undefined)).to.equal(true);
    expect(own.map((e) => `${e.type}:${e.data.agent_id}`)).to.deep.equal([
      'step_started:three',
      'step_completed:three',
      'step_started:four',
      'step_completed:four',
      'step_started:done',
      'step_completed:done',
      'run_completed:run',
    ]);
    const served = await journalOf(service.url, admin.token, fork);
    expect(served.map((e) => e.seq)).to.deep.equal(stored.map((_, i) => i + 1));

    expect(await readBack(service, admin.token, source), 'the source run reads back unchanged').to.deep.equal(sourceBefore);
    expect(await storedEvents(db, source)).to.deep.equal(sourceStored);
  });

  it('answers 404 for a step the workflow does not have, 409 for one the run never reached, 422 for a bad body or input', async () => {
    const before = await db.query('SELECT count(*)::int AS n FROM events');
    const unknown = await asAdmin().post(`/api/runs/${source}/fork`, { from_step: 'nine' });
    expectError(unknown, 404, 'NOT_FOUND');
    expect(JSON.stringify(unknown.body)).to.include('has no step nine');
    const unreached = await asAdmin().post(`/api/runs/${source}/fork`, { from_step: 'four' });
    expectError(unreached, 409, 'CONFLICT');
    expect(JSON.stringify(unreached.body)).to.include('never reached step four');
    expectError(await asAdmin().post(`/api/runs/${source}/fork`, {}), 422);
    expectError(await asAdmin().post(`/api/runs/${source}/fork`, { from_step: 'three', input: 'tag' }), 422);
    const badInput = await asAdmin().post(`/api/runs/${source}/fork`, { from_step: 'three', input: { tag: 7 } });
    expectError(badInput, 422);
    expect(JSON.stringify(badInput.body), 'the merged input is checked by the input schema').to.include('tag');
    expectError(await asAdmin().post('/api/runs/00000000-0000-4000-8000-000000000000/fork', { from_step: 'three' }), 404);
    expect((await db.query('SELECT count(*)::int AS n FROM events')).rows[0].n, 'nothing was appended').to.equal(before.rows[0].n);
  });

  it('answers 403 without runs:control, and 404 for a run the caller cannot read', async () => {
    const reader = await createUser(service.url, admin.token, 'fork-reader@example.com', { fork_readers: ['runs:read'] });
    expectError(await client(service.url, reader.token).post(`/api/runs/${source}/fork`, { from_step: 'three' }), 403);
    const controller = await createUser(service.url, admin.token, 'fork-controller@example.com', { fork_controllers: ['runs:read', 'runs:control'] });
    const other = await client(service.url, controller.token).post(`/api/runs/${source}/fork`, { from_step: 'three' });
    expectError(other, 404, 'NOT_FOUND');
  });

  it('a fork of a fork copies the fork: its copies name the run they were copied from', async () => {
    const again = await asAdmin().post(`/api/runs/${fork}/fork`, { from_step: 'four' });
    expect(again.status, JSON.stringify(again.body)).to.equal(202);
    const done = await waitForStatus(service.url, admin.token, again.body.id, ['completed', 'failed'], 20_000);
    expect(done.output).to.deep.equal({ first: 1, second: 1, third: 2, fourth: 2, tag: 'second' });
    expect(api.counts()).to.deep.equal({ '/one': 1, '/two': 1, '/three': 2, '/four': 2 });
    const stored = await storedEvents(db, again.body.id);
    expect(new Set(stored.slice(1).flatMap((e) => (e.metadata.copied_from ? [e.metadata.copied_from.run_id] : [])))).to.deep.equal(new Set([fork]));
  });

  it("a fork past a decided approval copies the decision: the source's approval stays the source's, the fork asks nobody", async () => {
    const started = await asAdmin().post('/api/workflows/review/runs?wait=false', { api: api.url });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const reviewed = started.body.id as string;
    await waitForStatus(service.url, admin.token, reviewed, ['waiting_human']);
    const decided = await asAdmin().post(`/api/runs/${reviewed}/human/approve`, { decision: 'approve' });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect((await waitForStatus(service.url, admin.token, reviewed, ['completed', 'failed'], 20_000)).status).to.equal('failed');
    const approvalsBefore = (await db.query('SELECT * FROM svc_approvals ORDER BY approval_id')).rows;
    expect(approvalsBefore.map((a) => [a.run_id, a.status])).to.deep.equal([[reviewed, 'decided']]);

    api.broken.delete('/notify');
    const forked = await asAdmin().post(`/api/runs/${reviewed}/fork`, { from_step: 'notify' });
    expect(forked.status, JSON.stringify(forked.body)).to.equal(202);
    const done = await waitForStatus(service.url, admin.token, forked.body.id, ['completed', 'failed', 'waiting_human'], 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(done.output).to.deep.equal({ notified: 2 });
    const copied = (await storedEvents(db, forked.body.id)).filter((e) => e.metadata.copied_from).map((e) => e.type);
    expect(copied).to.include.members(['approval_requested', 'approval_decided']);
    expect((await db.query('SELECT * FROM svc_approvals ORDER BY approval_id')).rows, 'svc_approvals is unchanged').to.deep.equal(approvalsBefore);
    expect((await asAdmin().get('/api/approvals')).body).to.deep.equal([]);
    reviewFork = forked.body.id as string;
    reviewSource = reviewed;
  });

  it('export, CLI import into a fresh database (copies stay marked) and replay (copied steps KEPT, the fork own steps SAME)', async () => {
    const exported = await asAdmin().get(`/api/runs/${fork}/export`);
    expect(exported.status).to.equal(200);
    expect(exported.body.run.forked_from).to.deep.equal({ run_id: source, step_id: 'three' });
    const copied = exported.body.events.filter((e: any) => e.metadata.copied_from);
    expect(copied.map((e: any) => `${e.type}:${e.agent_id}`)).to.deep.equal([
      'step_started:one',
      'step_completed:one',
      'step_started:two',
      'step_completed:two',
    ]);
    const file = path.join(workDir, `${fork}.json`);
    writeFileSync(file, JSON.stringify(exported.body));
    const before = await readBack(service, admin.token, fork);

    const freshUrl = await createTestDatabase();
    const imported = await runCli(['runs', 'import', file], { DATABASE_URL: freshUrl, SVC_PROJECT_DIR: FORK_PROJECT }, 60_000);
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stdout).to.equal(`imported run ${fork} (completed)\n`);
    const fresh = openPool(freshUrl);
    pools.push(fresh);
    const importedEvents = await storedEvents(fresh, fork);
    expect(importedEvents.filter((e) => e.metadata.copied_from).map((e) => e.metadata.copied_from.run_id)).to.deep.equal([source, source, source, source]);
    const copy = await serve(freshUrl);
    const copyAdmin = await bootstrapAdmin(copy.url);
    expect(await readBack(copy, copyAdmin.token, fork), 'the fork reads back byte for byte').to.deep.equal(before);

    const lines = ['KEPT one (APICall): copied by a fork from run', 'KEPT two (APICall): copied by a fork from run'].map((l) => `${l} ${source}`);
    const expected = [...lines, 'SAME three (APICall)', 'SAME four (APICall)', 'SAME done (Response)', '5 steps: 3 same, 0 different, 2 kept', ''];
    const callsBefore = api.calls.length;
    for (const target of [fork, file]) {
      const replayed = await runCli(['runs', 'replay', target], { DATABASE_URL: freshUrl, SVC_PROJECT_DIR: FORK_PROJECT }, 60_000);
      expect(replayed.code, replayed.stderr).to.equal(0);
      expect(replayed.stdout.split('\n'), target).to.deep.equal(expected);
    }
    expect(api.calls.length, 'replay calls no outside API').to.equal(callsBefore);
  });

  it('svc_runs and svc_approvals rebuilt from the log give the same rows (forked_from included)', async () => {
    const { pool, registry } = service.kernel;
    for (const [name, key] of [
      ['svc_runs', 'id'],
      ['svc_approvals', 'approval_id'],
    ] as const) {
      const inline = await tableChecksum(pool, name, key);
      expect(inline.rows, name).to.be.above(0);
      await rebuildProjection(pool, registry, registry.get(name)!);
      expect(await tableChecksum(pool, name, key), name).to.deep.equal(inline);
    }
    const { rows } = await pool.query(`SELECT id, forked_from FROM svc_runs WHERE forked_from IS NOT NULL ORDER BY created_at`);
    expect(rows.map((r) => r.forked_from)).to.deep.equal([
      { run_id: source, step_id: 'three' },
      { run_id: fork, step_id: 'four' },
      { run_id: reviewSource, step_id: 'notify' },
    ]);
    expect(rows[0].id).to.equal(fork);
    expect(rows[2].id).to.equal(reviewFork);
  });

  it('the client library: runs.fork answers the new run; a refused fork is an SvcRequestError with the status', async () => {
    const svc = new SvcClient({ baseUrl: service.url, token: admin.token });
    const run = await svc.runs.fork(source, 'three', { tag: 'client' });
    expect(run.forked_from).to.deep.equal({ run_id: source, step_id: 'three' });
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed', 'failed'], 20_000);
    expect(done.output).to.include({ first: 1, tag: 'client' });
    const refused = await svc.runs.fork(source, 'four').then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).to.be.instanceOf(SvcRequestError);
    expect((refused as SvcRequestError).status).to.equal(409);
  });

  it('a worker killed (SIGKILL) while it drives a fork: another process finishes it, and still never runs the steps before from_step', async () => {
    // Only the two processes below drive runs from here on.
    await service.close();
    const a = await ServiceProcess.start(databaseUrl, FORK_PROJECT);
    api.slow.set('/three', 60_000);
    const before = api.counts();
    const forked = await client(a.url, admin.token).post(`/api/runs/${source}/fork`, { from_step: 'three', input: { tag: 'crash' } });
    expect(forked.status, JSON.stringify(forked.body)).to.equal(202);
    const deadline = Date.now() + 20_000;
    while (api.count('/three') === before['/three'] && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(api.count('/three'), 'A called three').to.equal(before['/three']! + 1);
    await a.kill('SIGKILL');
    api.slow.delete('/three');
    const b = await ServiceProcess.start(databaseUrl, FORK_PROJECT);
    const done = await waitForStatus(b.url, admin.token, forked.body.id, ['completed', 'failed'], 5 * LEASE_MS + 20_000);
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(done.output).to.include({ first: 1, tag: 'crash' });
    // Three ran again on B (at least once, as any step in flight when its worker dies); one and two never.
    expect(api.counts()).to.deep.equal({ ...before, '/three': before['/three']! + 2, '/four': before['/four']! + 1 });
    await b.kill();
  });
});
