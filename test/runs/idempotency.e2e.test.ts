// Idempotency-Key on triggers: one run per key across two processes, replays with the first run's
// answer, 422 for another body, per-caller and per-workflow scope, streaming replays, and expiry.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, eventually, expectError, type HttpResult } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { killAllServices, PROCESS_SIGNING_KEY, ServiceProcess } from '../support/serviceProcess.js';
import { SseReader } from '../support/sse.js';
import { createTestDatabase } from '../support/db.js';
import { createUser } from '../support/users.js';
import { ENGINE_PROJECT } from '../workflows/helpers.js';
import { schemaValidator } from '../api/openapiCheck.js';
import { keyHashOf } from '../../src/runs/idempotency/keys.js';
import { KEY_CLAIMED, keyStream } from '../../src/runs/idempotency/projection.js';

const RUNNERS = { runners: ['workflows:run'] };

describe('Idempotency-Key on triggers', function () {
  this.timeout(60_000);
  let service: Service;
  let second: ServiceProcess;
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };

  const trigger = (baseUrl: string, path: string, options: { token?: string; key?: string; json?: unknown; accept?: string } = {}) =>
    call(baseUrl, 'POST', path, {
      ...(options.token ? { token: options.token } : {}),
      json: options.json ?? {},
      headers: { ...(options.key !== undefined ? { 'idempotency-key': options.key } : {}), ...(options.accept ? { accept: options.accept } : {}) },
    });
  const isReplay = (answer: HttpResult) => answer.headers.get('idempotent-replayed') === 'true';
  const runsOf = async (token: string, workflow: string) =>
    (await call(service.url, 'GET', `/api/runs?workflow=${workflow}&limit=1000`, { token })).body.length;

  before(async function () {
    this.timeout(120_000);
    const databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl, projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY } });
    const admin = await bootstrapAdmin(service.url);
    alice = await createUser(service.url, admin.token, 'alice@example.com', RUNNERS);
    bob = await createUser(service.url, admin.token, 'bob@example.com', RUNNERS);
    second = await ServiceProcess.start(databaseUrl, ENGINE_PROJECT);
  });
  after(async () => {
    await killAllServices();
    await service?.close();
  });

  it('20 concurrent requests with one key on two processes: one run, 20 identical answers, 19 marked as replays', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        trigger(i % 2 ? second.url : service.url, '/api/wf/route', { token: alice.token, key: 'order-1', json: { want: 'jump' } }),
      ),
    );
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).to.equal(answers[0]!.status);
      expect(answer.body).to.deep.equal(answers[0]!.body);
      expect(runIdOf(answer)).to.equal(runIdOf(answers[0]!));
    }
    expect(answers[0]!.status).to.equal(201);
    expect(answers.filter(isReplay)).to.have.length(19);
    expect(await runsOf(alice.token, 'route')).to.equal(1);
  });

  it('after the run ended: the same 201 body or failure envelope, Idempotent-Replayed and the same X-Svc-Run-Id; another body is 422', async () => {
    const first = await trigger(service.url, '/api/wf/route', { token: alice.token, key: 'order-2', json: { want: 'sideways' } });
    expect(first.status).to.equal(500);
    expect(first.body).to.include({ success: false });
    const again = await trigger(second.url, '/api/wf/route', { token: alice.token, key: 'order-2', json: { want: 'sideways' } });
    expect([again.status, again.body, runIdOf(again), isReplay(again)]).to.deep.equal([500, first.body, runIdOf(first), true]);
    const completed = await trigger(second.url, '/api/wf/route', { token: alice.token, key: 'order-1', json: { want: 'jump' } });
    expect([completed.status, isReplay(completed)]).to.deep.equal([201, true]);
    const reused = await trigger(service.url, '/api/wf/route', { token: alice.token, key: 'order-1', json: { want: 'fall' } });
    expectError(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
    // Fuzzing finding: the trigger's documented 422 once allowed only the ValidationError shape.
    const doc = (await call(service.url, 'GET', '/openapi.json')).body;
    const documented = doc.paths['/api/wf/route'].post.responses['422'].content['application/json'].schema;
    expect(schemaValidator(doc, documented)(reused.body), JSON.stringify(reused.body)).to.equal(true);
    expect(await runsOf(alice.token, 'route')).to.equal(2);
  });

  it('is scoped to the caller and the workflow: another user or another workflow with the same key starts its own run', async () => {
    const mine = await trigger(service.url, '/api/wf/route', { token: alice.token, key: 'shared', json: { want: 'jump' } });
    const bobs = await trigger(service.url, '/api/wf/route', { token: bob.token, key: 'shared', json: { want: 'jump' } });
    const typed = await trigger(service.url, '/api/wf/typed', { token: alice.token, key: 'shared', json: { name: 'n' } });
    expect(new Set([runIdOf(mine), runIdOf(bobs), runIdOf(typed)]).size).to.equal(3);
    expect([mine, bobs, typed].some(isReplay)).to.equal(false);
    // Anonymous callers of a public workflow: one caller per client address.
    const open = await trigger(service.url, '/api/wf/open', { key: 'anon-1' });
    const openAgain = await trigger(second.url, '/api/wf/open', { key: 'anon-1' });
    const signedIn = await trigger(service.url, '/api/wf/open', { key: 'anon-1', token: alice.token });
    expect([open.status, runIdOf(openAgain), isReplay(openAgain)]).to.deep.equal([201, runIdOf(open), true]);
    expect(runIdOf(signedIn)).to.not.equal(runIdOf(open));
  });

  it('a claim whose run was never journaled is taken over after a minute by the next request with the key', async () => {
    const keyHash = keyHashOf({ workflow: 'route', caller: `user::${bob.id}`, key: 'orphan' });
    const orphan = '01a20000-0000-7000-8000-000000000001';
    const claimed = { key_hash: keyHash, workflow: 'route', run_id: orphan, request_hash: 'x', expires_at: new Date(Date.now() + 3_600_000).toISOString() };
    const longAgo = new Date(Date.now() - 120_000).toISOString();
    await service.kernel.store.append({
      streamId: keyStream(keyHash),
      expectedVersion: 0,
      events: [{ type: KEY_CLAIMED, data: claimed, recordedAt: longAgo }],
    });
    const answer = await trigger(service.url, '/api/wf/route', { token: bob.token, key: 'orphan', json: { want: 'jump' } });
    expect([answer.status, isReplay(answer)]).to.deep.equal([201, false]);
    expect(runIdOf(answer)).to.not.equal(orphan);
    const again = await trigger(second.url, '/api/wf/route', { token: bob.token, key: 'orphan', json: { want: 'jump' } });
    expect([runIdOf(again), isReplay(again)]).to.deep.equal([runIdOf(answer), true]);
  });

  it('is described in /openapi.json on every trigger route', async () => {
    const doc = (await call(service.url, 'GET', '/openapi.json')).body;
    for (const op of [doc.paths['/api/wf/route'].post, doc.paths['/api/workflows/route/runs'].post]) {
      expect(op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key')).to.deep.include({ in: 'header', required: false });
      expect(op.responses['201'].headers).to.have.property('Idempotent-Replayed');
    }
  });

  it('refuses an empty key, one over 255 characters and one with a control character: 400, and nothing starts', async () => {
    const before = await runsOf(bob.token, 'route');
    for (const key of ['', 'k'.repeat(256), 'tab\there']) {
      expectError(await trigger(service.url, '/api/wf/route', { token: bob.token, key, json: { want: 'jump' } }), 400, 'BAD_REQUEST');
    }
    expect((await trigger(service.url, '/api/wf/route', { token: bob.token, key: 'k'.repeat(255), json: { want: 'jump' } })).status).to.equal(201);
    expect(await runsOf(bob.token, 'route')).to.equal(before + 1);
  });

  it('?wait=false: 202 with the run while it goes on, replayed as 202; once ended, the replay is its final answer', async () => {
    const first = await call(service.url, 'POST', '/api/wf/slow?wait=false', {
      token: alice.token,
      json: { ms: 200 },
      headers: { 'idempotency-key': 'slow-1' },
    });
    expect(first.status).to.equal(202);
    const again = await call(second.url, 'POST', '/api/wf/slow?wait=false', {
      token: alice.token,
      json: { ms: 200 },
      headers: { 'idempotency-key': 'slow-1' },
    });
    expect([again.status, again.body.id, runIdOf(again), isReplay(again)]).to.deep.equal([202, first.body.id, first.body.id, true]);
    await waitForStatus(service.url, alice.token, first.body.id, ['completed'], 20_000);
    const ended = await call(service.url, 'POST', '/api/wf/slow?wait=false', {
      token: alice.token,
      json: { ms: 200 },
      headers: { 'idempotency-key': 'slow-1' },
    });
    expect([ended.status, runIdOf(ended), isReplay(ended)]).to.deep.equal([201, first.body.id, true]);
  });

  it('a streaming trigger replays the first run’s step frames from its journal', async () => {
    const stream = async (baseUrl: string) => {
      const reader = await SseReader.open(`${baseUrl}/api/wf/route`, {
        token: alice.token,
        method: 'POST',
        json: { want: 'jump' },
        headers: { 'idempotency-key': 'stream-1' },
      });
      const frames = await reader.readToEnd(15_000);
      reader.close();
      return { status: reader.status, headers: reader.headers, frames: frames.map((f) => [f.event, f.data]) };
    };
    const first = await stream(service.url);
    const replay = await stream(second.url);
    expect(first.status).to.equal(200);
    expect(first.frames.at(-1)![0]).to.equal('done');
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    expect(replay.headers.get('x-svc-run-id')).to.equal(first.headers.get('x-svc-run-id'));
    expect(replay.frames).to.deep.equal(first.frames);
  });
});

describe('Idempotency-Key expiry', function () {
  this.timeout(60_000);
  let service: Service;
  let token: string;

  before(async () => {
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_IDEMPOTENCY_TTL_SECONDS: '1' } });
    token = (await bootstrapAdmin(service.url)).token;
  });
  after(async () => {
    await service?.close();
  });

  it('after SVC_IDEMPOTENCY_TTL_SECONDS the key starts a new run, even with another body; the sweep deletes expired rows', async () => {
    const post = (want: string) => call(service.url, 'POST', '/api/wf/route', { token, json: { want }, headers: { 'idempotency-key': 'short' } });
    const first = await post('jump');
    const keys = () => service.kernel.pool.query('SELECT run_id FROM svc_idempotency_keys').then((r) => r.rows.map((row) => row.run_id));
    expect(await keys()).to.deep.equal([runIdOf(first)]);
    const swept = await eventually(async () => (await keys()).length === 0, 10_000, 100);
    expect(swept.ok, 'the sweep deleted the expired key').to.equal(true);
    const later = await post('fall');
    expect(later.status).to.not.equal(422);
    expect(runIdOf(later)).to.not.equal(runIdOf(first));
    expect(later.headers.get('idempotent-replayed')).to.equal(null);
    // The claims stay in the log: two claims of one key, on one stream.
    const { rows } = await service.kernel.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT stream_id)::int AS streams FROM events WHERE type = 'idempotency_key_claimed'`,
    );
    expect(rows[0]).to.deep.equal({ n: 2, streams: 1 });
  });
});

function runIdOf(answer: HttpResult): string | null {
  return answer.headers.get('x-svc-run-id');
}
