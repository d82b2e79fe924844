// spec.concurrency over two service processes on one database: never more runs executing than the
// limit (checked from the journal's global positions), queued runs start in arrival order on either
// worker, per-key limits are independent, `reject` is 429 with Retry-After, a run waiting for a timer
// holds no slot, a queued run can be aborted, and a sync trigger of a queued run waits for its end.
import { expect } from 'chai';
import pg from 'pg';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, expectError, type HttpResult } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { waitForStatus } from '../support/runs.js';
import { readSse } from '../support/sse.js';
import { startTestService } from '../support/service.js';
import { killAllServices, PROCESS_SIGNING_KEY, ServiceProcess } from '../support/serviceProcess.js';
import { ENGINE_PROJECT } from '../workflows/helpers.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { runsProjection } from '../../src/runs/projection.js';
import { concurrencyWorkflow, logOf, mostHolding, SLOW } from './concurrencyLog.js';

const PROJECT_FILES = {
  'workflows/limited.yaml': concurrencyWorkflow('limited', '{limit: 2}', [SLOW('a'), SLOW('b')].join('\n')),
  'workflows/per_key.yaml': concurrencyWorkflow('per_key', '{limit: 1, key: "{{ input.customer }}"}', SLOW('a')),
  'workflows/refusing.yaml': concurrencyWorkflow('refusing', '{limit: 1, on_limit: reject}', SLOW('a')),
  'workflows/timed.yaml': concurrencyWorkflow(
    'timed',
    '{limit: 1}',
    [SLOW('a'), '    - {id: pause, kind: Wait, duration: 4s}', '    - {id: b, kind: Functional, runner: slow, params: {ms: "{{ ms2 }}"}}'].join('\n'),
  ),
};

describe('spec.concurrency: limits and queues across two processes', function () {
  this.timeout(120_000);
  let service: Service;
  let second: ServiceProcess;
  let token: string;
  let db: pg.Pool;
  let databaseUrl: string;
  let project: string;
  let count = 0;
  /** Alternates the two processes, so starts, dequeues and runs spread over both. */
  const nextUrl = () => (count++ % 2 ? second.url : service.url);

  const start = (name: string, json: Record<string, unknown>, options: { url?: string; wait?: boolean } = {}) =>
    call(options.url ?? nextUrl(), 'POST', `/api/cc/${name}${options.wait ? '' : '?wait=false'}`, { token, json });
  const idOf = (answer: HttpResult): string => {
    expect(answer.status, JSON.stringify(answer.body)).to.be.oneOf([201, 202]);
    return answer.headers.get('x-svc-run-id')!;
  };

  const waitAll = (ids: string[], statuses: string[], timeoutMs = 60_000) =>
    Promise.all(ids.map((id) => waitForStatus(service.url, token, id, statuses, timeoutMs)));

  before(async function () {
    this.timeout(120_000);
    databaseUrl = await createTestDatabase();
    project = copyProject(ENGINE_PROJECT, PROJECT_FILES);
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    service = await startTestService({ databaseUrl, projectDir: project, env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY, SVC_RUN_CLAIM_INTERVAL_MS: '200' } });
    token = (await bootstrapAdmin(service.url)).token;
    second = await ServiceProcess.start(databaseUrl, project);
  });
  after(async () => {
    await killAllServices();
    await service?.close();
    await db?.end();
  });

  it('limit 2, ten slow runs over two processes: never more than 2 executing, started in arrival order, all complete', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(idOf(await start('limited', { ms: 400 })));
    const queued = await call(service.url, 'GET', '/api/runs?status=queued&workflow=limited', { token });
    expect(queued.status).to.equal(200);
    expect(queued.body.length, 'runs waiting for a slot are listed as queued').to.be.greaterThan(0);
    expect(queued.body.every((run: { status: string }) => run.status === 'queued')).to.equal(true);
    await waitAll(ids, ['completed']);

    const log = await logOf(db, ids);
    expect(mostHolding(log)).to.equal(2);
    expect(log.filter((e) => e.type === 'run_queued').length, 'some runs waited').to.be.greaterThan(0);
    const dequeueOrder = log.filter((e) => e.type === 'run_dequeued').map((e) => e.run_id);
    expect(dequeueOrder, 'slots are granted in arrival order').to.deep.equal(ids);
    expect(log.filter((e) => e.type === 'run_completed').map((e) => e.run_id)).to.have.members(ids);
  });

  it('ten simultaneous starts over both processes: never more than 2 executing, slots granted in arrival (created_at) order', async () => {
    const ids = (await Promise.all(Array.from({ length: 10 }, () => start('limited', { ms: 300 })))).map(idOf);
    await waitAll(ids, ['completed']);
    const log = await logOf(db, ids);
    expect(mostHolding(log)).to.equal(2);
    const { rows } = await db.query<{ id: string }>('SELECT id FROM svc_runs WHERE id = ANY($1::uuid[]) ORDER BY created_at, id', [ids]);
    const queued = new Set(log.filter((e) => e.type === 'run_queued').map((e) => e.run_id));
    const dequeuedFromQueue = log.filter((e) => e.type === 'run_dequeued' && queued.has(e.run_id)).map((e) => e.run_id);
    expect(dequeuedFromQueue, 'queued runs take slots in arrival order').to.deep.equal(rows.map((r) => r.id).filter((id) => queued.has(id)));
  });

  it('per-key limits are independent: another key runs beside a full one, the same key waits', async () => {
    const a1 = idOf(await start('per_key', { ms: 1500, customer: 'a' }));
    const a2 = idOf(await start('per_key', { ms: 200, customer: 'a' }));
    const b1 = idOf(await start('per_key', { ms: 200, customer: 'b' }));
    expect((await call(service.url, 'GET', `/api/runs/${a2}`, { token })).body.status).to.equal('queued');
    await waitAll([a1, a2, b1], ['completed']);
    const log = await logOf(db, [a1, a2, b1]);
    const at = (runId: string, type: string) => log.find((e) => e.run_id === runId && e.type === type)!.position;
    expect(at(b1, 'run_completed'), 'b ran while a was full').to.be.lessThan(at(a1, 'run_completed'));
    expect(at(a2, 'run_dequeued'), 'the second run of a waited for the first').to.be.greaterThan(at(a1, 'run_completed'));
  });

  it('on_limit reject: 429 with Retry-After and the error shape while the slot is taken; nothing is started', async () => {
    const first = idOf(await start('refusing', { ms: 1500 }));
    const refused = await start('refusing', { ms: 10 });
    expectError(refused, 429, 'TOO_MANY_REQUESTS');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(refused.body.detail).to.match(/concurrency limit/);
    expect(refused.headers.get('x-svc-run-id')).to.equal(null);
    const keyed = (url: string) =>
      call(url, 'POST', '/api/cc/refusing?wait=false', { token, json: { ms: 10 }, headers: { 'idempotency-key': 'refused-once' } });
    expectError(await keyed(second.url), 429, 'TOO_MANY_REQUESTS');
    await waitAll([first], ['completed']);
    // The refused start gave its Idempotency-Key back: the retry starts the run, and a repeat replays it.
    const retried = await keyed(service.url);
    const later = idOf(retried);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect((await keyed(second.url)).headers.get('x-svc-run-id')).to.equal(later);
    await waitAll([later], ['completed']);
    expect((await call(service.url, 'GET', '/api/runs?workflow=refusing', { token })).body).to.have.length(2);
  });

  it('a run waiting for a timer holds no slot; woken while the slot is taken, it waits for it again', async () => {
    const t1 = idOf(await start('timed', { ms: 100, ms2: 10 }));
    await waitForStatus(service.url, token, t1, ['waiting_timer'], 30_000);
    // t2 holds the slot from before t1's timer fires (4 s) until after it (6 s): t1 wakes to a full limit.
    const t2 = idOf(await start('timed', { ms: 6000, ms2: 10 }));
    await waitAll([t1, t2], ['completed']);
    const log = await logOf(db, [t1, t2]);
    expect(mostHolding(log)).to.equal(1);
    const at = (runId: string, type: string) => log.find((e) => e.run_id === runId && e.type === type)!.position;
    expect(at(t2, 'run_dequeued'), 't2 took the slot t1 gave up for its timer').to.be.lessThan(at(t1, 'timer_fired'));
    const t1Types = log.filter((e) => e.run_id === t1).map((e) => e.type);
    expect(t1Types.slice(t1Types.indexOf('timer_started')), 'woken with the slot taken, t1 queued again').to.include.members(['run_queued', 'run_dequeued']);
  });

  it('a queued run aborted: aborted, it frees nothing, and the queue goes on', async () => {
    const holder = idOf(await start('per_key', { ms: 1500, customer: 'z' }));
    const waiting = idOf(await start('per_key', { ms: 10, customer: 'z' }));
    expect((await call(service.url, 'GET', `/api/runs/${waiting}`, { token })).body.status).to.equal('queued');
    const abort = await call(second.url, 'POST', `/api/runs/${waiting}/abort`, { token, json: {} });
    expect(abort.status, JSON.stringify(abort.body)).to.be.oneOf([200, 202]);
    await waitForStatus(service.url, token, waiting, ['aborted']);
    expect((await call(service.url, 'GET', `/api/runs/${holder}`, { token })).body.status).to.equal('running');
    const next = idOf(await start('per_key', { ms: 10, customer: 'z' }));
    await waitAll([holder, next], ['completed']);
    const log = await logOf(db, [holder, waiting, next]);
    expect(log.filter((e) => e.run_id === waiting).map((e) => e.type)).to.deep.equal(['run_started', 'run_queued', 'run_aborted']);
    expect(mostHolding(log)).to.equal(1);
  });

  it('a queued run paused at once gives its place up; resumed, it queues again and runs after the holder', async () => {
    const holder = idOf(await start('per_key', { ms: 2000, customer: 'p' }));
    const waiting = idOf(await start('per_key', { ms: 10, customer: 'p' }));
    expect((await call(second.url, 'POST', `/api/runs/${waiting}/pause`, { token, json: {} })).status).to.be.oneOf([200, 202]);
    expect(await waitForStatus(service.url, token, waiting, ['paused'])).not.to.have.property('concurrency');
    expect((await call(service.url, 'POST', `/api/runs/${waiting}/resume`, { token, json: {} })).status).to.be.oneOf([200, 202]);
    await waitAll([holder, waiting], ['completed']);
    const log = await logOf(db, [holder, waiting]);
    expect(log.filter((e) => e.run_id === waiting).map((e) => e.type)).to.deep.equal([
      'run_started',
      'run_queued',
      'paused',
      'resumed',
      'run_queued',
      'run_dequeued',
      'step_started',
      'step_completed',
      'run_completed',
    ]);
    expect(mostHolding(log)).to.equal(1);
  });

  it('a streaming trigger of a queued run streams its steps once it starts, then done', async () => {
    const holder = idOf(await start('per_key', { ms: 1200, customer: 's' }));
    const streamed = await readSse(`${service.url}/api/cc/per_key`, {
      token,
      method: 'POST',
      json: { ms: 10, customer: 's' },
      headers: { accept: 'text/event-stream' },
      timeoutMs: 30_000,
    });
    expect(streamed.status).to.equal(200);
    expect(streamed.frames.map((f) => f.event)).to.deep.equal(['step', 'done']);
    expect(streamed.frames[0]!.data.step_id).to.equal('a');
    const log = await logOf(db, [holder, (await call(service.url, 'GET', '/api/runs?workflow=per_key&limit=1', { token })).body[0].id]);
    expect(log.map((e) => e.type)).to.include('run_queued');
    expect(mostHolding(log)).to.equal(1);
  });

  it('a worker killed while its run holds the slot: the run keeps the slot, resumes elsewhere, and the queue goes on after it', async () => {
    const victim = await ServiceProcess.start(databaseUrl, project);
    const holder = idOf(await start('per_key', { ms: 3000, customer: 'k' }, { url: victim.url }));
    const waiting = idOf(await start('per_key', { ms: 10, customer: 'k' }, { url: service.url }));
    await victim.kill();
    await waitAll([holder, waiting], ['completed']);
    const log = await logOf(db, [holder, waiting]);
    const at = (runId: string, type: string) => log.find((e) => e.run_id === runId && e.type === type)!.position;
    expect(at(waiting, 'run_dequeued'), 'the queued run waited for the resumed holder').to.be.greaterThan(at(holder, 'run_completed'));
    expect(mostHolding(log)).to.equal(1);
  });

  it('run detail shows the slot and queue position; svc_runs rebuilt from the log has the same rows, slots included, byte for byte', async () => {
    const checksum = async () =>
      (await service.kernel.pool.query(`SELECT count(*) AS n, md5(string_agg(r::text, '|' ORDER BY id)) AS sum FROM svc_runs r`)).rows[0];
    // A run holding the slot (its step takes long enough for the rebuild) and one waiting for it.
    const holder = idOf(await start('per_key', { ms: 6000, customer: 'r' }));
    const waiting = idOf(await start('per_key', { ms: 10, customer: 'r' }));
    const { rows } = await service.kernel.pool.query(`SELECT slot FROM svc_runs WHERE id = ANY($1::uuid[]) ORDER BY created_at`, [[holder, waiting]]);
    expect(rows.map((r) => r.slot)).to.deep.equal(['held', 'waiting']);
    const detail = (await call(service.url, 'GET', `/api/runs/${waiting}`, { token })).body;
    expect(detail.concurrency).to.deep.equal({ key: 'r', slot: 'waiting', queue_position: 1 });
    const live = await checksum();
    await rebuildProjection(service.kernel.pool, service.kernel.registry, runsProjection);
    expect(await checksum()).to.deep.equal(live);
    await waitAll([holder, waiting], ['completed']);
  });

  it('a sync trigger of a queued run waits for it within the sync timeout and answers 201', async () => {
    const holder = idOf(await start('per_key', { ms: 1000, customer: 'y' }));
    const answer = await start('per_key', { ms: 10, customer: 'y' }, { wait: true });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const log = await logOf(db, [holder, answer.headers.get('x-svc-run-id')!]);
    expect(log.map((e) => e.type)).to.include('run_queued');
    expect(mostHolding(log)).to.equal(1);
  });
});
