// Trigger answers: 201/202/422/404/405/413, the scope and group gates, public workflows, and the streaming trigger.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectUnauthenticated } from '../support/http.js';
import { expectNoPrivateKeys, journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { createUser } from '../support/users.js';
import { ENGINE_PROJECT, SIGNING_KEY } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SYNC_TIMEOUT_MS = 800;
const BODY_LIMIT = 4096;

describe('workflow triggers over HTTP', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: string;
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({
      projectDir: ENGINE_PROJECT,
      env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_SYNC_TIMEOUT_MS: String(SYNC_TIMEOUT_MS), SVC_BODY_LIMIT_BYTES: String(BODY_LIMIT) },
    });
    admin = (await bootstrapAdmin(service.url)).token;
    api = client(service.url, admin);
  });
  after(async () => {
    await service?.close();
  });

  describe('answers', () => {
    it('201 with the output and X-Svc-Run-Id, on the workflow path and on /api/workflows/{name}/runs', async () => {
      for (const path of ['/api/wf/route', '/api/workflows/route/runs']) {
        const result = await api.post(path, { want: 'jump' });
        expect(result.status, `${path}: ${JSON.stringify(result.body)}`).to.equal(201);
        expect(result.body).to.deep.equal({ want: 'jump', trail: ['jumped'] });
        const runId = result.headers.get('x-svc-run-id');
        expect(runId).to.match(UUID);
        const run = await api.get(`/api/runs/${runId}`);
        expect(run.body).to.deep.include({ id: runId, workflow: 'route', status: 'completed', output: { want: 'jump', trail: ['jumped'] } });
      }
    });

    it('?wait=false answers 202 with the run descriptor at once, and the run completes afterwards', async () => {
      const result = await api.post('/api/wf/slow?wait=false', { ms: 100 });
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      const runId = result.headers.get('x-svc-run-id')!;
      expect(result.body).to.include({
        id: runId,
        workflow: 'slow',
        schema_version: 'v1',
        status_url: `/api/runs/${runId}`,
        events_url: `/api/runs/${runId}/events`,
      });
      expect(result.body.status).to.be.oneOf(['queued', 'running']);
      expect(result.body.approval).to.equal(null);
      // Answered from the journaled state, in the very shape the read model serves.
      const read = await api.get(`/api/runs/${runId}`);
      const stable = ['id', 'workflow', 'schema_version', 'input', 'created_at', 'status_url', 'events_url'] as const;
      // Run detail alone adds the run's children (a read the 202 answer does not wait for).
      const { children, ...readDescriptor } = read.body;
      expect(children).to.deep.equal([]);
      expect(Object.keys(result.body).sort()).to.deep.equal(Object.keys(readDescriptor).sort());
      for (const field of stable) expect(result.body[field], field).to.deep.equal(read.body[field]);
      const done = await waitForStatus(service.url, admin, runId, ['completed', 'failed']);
      expect(done.status).to.equal('completed');
      expect(done.output).to.include({ ms: 100, ticks: 5 });
      expect(Object.keys(done.output.began)).to.deep.equal(['s1', 's2', 's3', 's4', 's5']);
    });

    it("GET: the query string is the input, read as the schema types; ?wait=false is the trigger's own", async () => {
      const answered = await api.get('/api/wf/lookup?n=42&exact=true');
      expect(answered.status, JSON.stringify(answered.body)).to.equal(201);
      expect(answered.body).to.deep.equal({ n: 42, exact: true });
      const accepted = await api.get('/api/wf/lookup?n=7&wait=false');
      expect(accepted.status, JSON.stringify(accepted.body)).to.equal(202);
      const done = await waitForStatus(service.url, admin, accepted.body.id, ['completed', 'failed']);
      expect(done.input).to.deep.equal({ n: 7 });
      const bad = await api.get('/api/wf/lookup?n=seven');
      expect(bad.status).to.equal(422);
      expect(bad.body.detail[0]).to.include({ type: 'int_type' });
      expect(bad.body.detail[0].loc).to.deep.equal(['query', 'n']);
      expect((await api.get('/api/wf/lookup')).body.detail[0]).to.deep.include({ loc: ['query', 'n'], type: 'missing' });
    });

    it('a run outliving SVC_SYNC_TIMEOUT_MS answers 202 and still completes', async () => {
      const started = Date.now();
      const result = await api.post('/api/wf/slow', {});
      const elapsed = Date.now() - started;
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      // It waited SVC_SYNC_TIMEOUT_MS (a lower bound, which load only makes safer), and answered before the run ended.
      expect(elapsed).to.be.at.least(SYNC_TIMEOUT_MS - 50);
      expect(result.body.status).to.be.oneOf(['queued', 'running']);
      expect(result.body.status_url).to.equal(`/api/runs/${result.body.id}`);
      const done = await waitForStatus(service.url, admin, result.body.id, ['completed', 'failed']);
      expect(done.status).to.equal('completed');
      expect(done.output).to.have.all.keys('ticks', 'began');
      expect(done.output.ticks).to.equal(5);
    });

    it('a first step longer than SVC_SYNC_TIMEOUT_MS still answers 202 at the timeout, naming a journaled run', async () => {
      const result = await api.post('/api/wf/slow', { ms: 4000 });
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      const journal = await journalOf(service.url, admin, result.body.id);
      expect(
        journal.map((e) => `${e.type}:${e.agent_id}`),
        'not held until the first step ends',
      ).to.not.include('step_completed:s1');
      const run = await api.get(`/api/runs/${result.body.id}`);
      expect(run.status, 'the run the 202 names exists').to.equal(200);
      expect(run.body.status).to.be.oneOf(['queued', 'running']);
      expect((await api.post(`/api/runs/${result.body.id}/abort`, { reason: 'test over' })).status).to.equal(200);
    });

    it('422 with a detail array for a missing field, a wrong type and an extra field', async () => {
      const missing = await api.post('/api/wf/typed', { age: 3 });
      expect(missing.status).to.equal(422);
      expect(missing.body.detail).to.deep.include({ loc: ['body', 'name'], msg: 'Field required', type: 'missing' });
      const wrongType = await api.post('/api/wf/typed', { name: 5 });
      expect(wrongType.status).to.equal(422);
      expect(wrongType.body.detail[0]).to.include({ type: 'string_type' });
      expect(wrongType.body.detail[0].loc).to.deep.equal(['body', 'name']);
      const wrongInteger = await api.post('/api/wf/typed', { name: 'a', age: 1.5 });
      expect(wrongInteger.status).to.equal(422);
      expect(wrongInteger.body.detail[0].loc).to.deep.equal(['body', 'age']);
      const extra = await api.post('/api/wf/typed', { name: 'a', extra: 1 });
      expect(extra.status).to.equal(422);
      expect(extra.body.detail[0].loc).to.deep.equal(['body', 'extra']);
      const accepted = await api.post('/api/wf/typed', { name: 'a', age: 2 });
      expect(accepted.status).to.equal(201);
    });

    it('422 when the body is not an object (an array, a string, a number, null)', async () => {
      for (const body of ['[1]', '"text"', '5', 'null']) {
        const result = await call(service.url, 'POST', '/api/wf/typed', { token: admin, json: body });
        expect(result.status, `${body}: ${JSON.stringify(result.body)}`).to.equal(422);
        expect(result.body.detail).to.deep.equal([{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }]);
      }
    });

    it('404 for an unknown workflow on /api/workflows/{name}/runs', async () => {
      const result = await api.post('/api/workflows/no_such_workflow/runs', {});
      expect(result.status).to.equal(404);
      expect(result.body.code).to.equal('NOT_FOUND');
    });

    it('405 with Allow for another method on a trigger path', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const result = await call(service.url, method, '/api/wf/typed', { token: admin });
        expect(result.status, method).to.equal(405);
        expect(result.headers.get('allow')).to.equal('POST');
      }
    });

    it('413 for a body over the limit; nothing runs', async () => {
      const before = (await api.get('/api/runs?workflow=typed&limit=1000')).body.length;
      const result = await api.post('/api/wf/typed', { name: 'x'.repeat(BODY_LIMIT) });
      expect(result.status).to.equal(413);
      expect((await api.get('/api/runs?workflow=typed&limit=1000')).body.length).to.equal(before);
    });
  });

  describe('gates', () => {
    let scopeOnly: string;
    let groupOnly: string;
    let both: string;

    before(async function () {
      this.timeout(30_000);
      scopeOnly = (await createUser(service.url, admin, 'scope@example.com', { wf_runner: ['wf:run'] })).token;
      groupOnly = (await createUser(service.url, admin, 'group@example.com', { wfgroup: [] })).token;
      both = (await createUser(service.url, admin, 'both@example.com', { wf_runner: ['wf:run'], wfgroup: [] })).token;
    });

    const run = (path: string, token?: string) => call(service.url, 'POST', path, { json: {}, ...(token ? { token } : {}) });

    it('401 without a token, on gated and on ungated non-public workflows', async () => {
      for (const path of ['/api/wf/gate/scope', '/api/wf/gate/group', '/api/wf/gate/both', '/api/wf/typed', '/api/workflows/gate_scope/runs']) {
        expectUnauthenticated(await run(path));
      }
    });

    it('required_scope: 403 without the scope, 201 with it', async () => {
      expect((await run('/api/wf/gate/scope', groupOnly)).status).to.equal(403);
      expect((await run('/api/workflows/gate_scope/runs', groupOnly)).status).to.equal(403);
      const ok = await run('/api/wf/gate/scope', scopeOnly);
      expect(ok.status).to.equal(201);
      expect(ok.body).to.deep.equal({ gate: 'scope' });
    });

    it('required_group: 403 outside the group, 201 inside', async () => {
      expect((await run('/api/wf/gate/group', scopeOnly)).status).to.equal(403);
      expect((await run('/api/wf/gate/group', groupOnly)).status).to.equal(201);
    });

    it('scope and group together need both', async () => {
      const denied = await run('/api/wf/gate/both', scopeOnly);
      expect(denied.status).to.equal(403);
      expect(denied.body.code).to.equal('PERMISSION_DENIED');
      expect((await run('/api/wf/gate/both', groupOnly)).status).to.equal(403);
      expect((await run('/api/wf/gate/both', both)).status).to.equal(201);
      expect((await run('/api/workflows/gate_both/runs', both)).status).to.equal(201);
    });

    it('iam:admin passes every gate', async () => {
      for (const path of ['/api/wf/gate/scope', '/api/wf/gate/group', '/api/wf/gate/both']) expect((await run(path, admin)).status, path).to.equal(201);
    });

    it('a public workflow runs without a token (and with one)', async () => {
      const anonymous = await run('/api/wf/open');
      expect(anonymous.status).to.equal(201);
      expect(anonymous.body).to.deep.equal({ opened: true });
      expect((await run('/api/workflows/open/runs')).status).to.equal(201);
      expect((await run('/api/wf/open', scopeOnly)).status).to.equal(201);
    });
  });

  describe('streaming trigger (Accept: text/event-stream)', () => {
    it('streams step frames with the SPEC fields, then done with the output', async () => {
      const reader = await SseReader.open(`${service.url}/api/workflows/functional/runs`, { token: admin, method: 'POST', json: { count: 2 } });
      expect(reader.status).to.equal(200);
      expect(reader.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(reader.headers.get('x-svc-run-id')).to.match(UUID);
      const frames = await reader.readToEnd();
      expect(frames.map((f) => f.event)).to.deep.equal(['step', 'step', 'step', 'done']);
      const steps = frames.slice(0, 3).map((f) => f.data);
      expect(steps.map((s) => [s.event_type, s.step_id, s.kind, s.signal])).to.deep.equal([
        ['step', 'merge', 'Functional', 'default'],
        ['step', 'both', 'Functional', 'go'],
        ['step', 'echo', 'Functional', 'default'],
      ]);
      for (const step of steps) {
        expect(Object.keys(step).sort()).to.deep.equal(['duration_ms', 'event_type', 'kind', 'signal', 'snapshot', 'step_id']);
        expect(step.duration_ms).to.be.a('number').and.at.least(0);
      }
      expect(steps[0].snapshot).to.deep.equal({ count: 100, merged: true });
      expect(steps[1].snapshot).to.deep.equal({ count: 100, merged: true, via_both: 'yes' });
      expect(steps[2].snapshot.echoed.n).to.equal(100);
      expect(frames[3]!.data.event_type).to.equal('done');
      expect(frames[3]!.data.output).to.deep.equal(steps[2].snapshot);
      for (const frame of frames) expectNoPrivateKeys(frame.data, `${frame.event} frame`);
      expect(reader.text).to.not.include('engine-only');
    });

    it('reports step wall time in duration_ms', async () => {
      const started = Date.now();
      const reader = await SseReader.open(`${service.url}/api/wf/slow`, { token: admin, method: 'POST', json: { ms: 120 } });
      const frames = await reader.readToEnd();
      const elapsed = Date.now() - started;
      const steps = frames.filter((f) => f.event === 'step').map((f) => f.data);
      expect(steps).to.have.length(5);
      // At least the step's 120 ms sleep, at most the whole stream's wall time: milliseconds of that step.
      for (const step of steps) expect(step.duration_ms).to.be.within(100, elapsed);
      expect(steps.map((s) => s.snapshot.ticks)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(frames.at(-1)!.data.event_type).to.equal('done');
      expect(frames.at(-1)!.data.output).to.deep.equal(steps.at(-1).snapshot);
      expect(frames.at(-1)!.data.output).to.include({ ms: 120, ticks: 5 });
    });

    it('ends with an error frame carrying message and details when the run fails', async () => {
      const reader = await SseReader.open(`${service.url}/api/wf/route`, { token: admin, method: 'POST', json: { want: 'throw' } });
      const frames = await reader.readToEnd();
      expect(frames.map((f) => f.event)).to.deep.equal(['step', 'error']);
      expect(frames[0]!.data).to.include({ event_type: 'step', step_id: 'pick', kind: 'Functional', signal: 'error', error_detail: 'thrown by act' });
      expect(frames[0]!.data.snapshot).to.deep.equal({ want: 'throw' });
      expect(frames[1]!.data).to.deep.equal({ event_type: 'error', message: 'thrown by act', details: 'step pick (Functional)' });
      const runId = reader.headers.get('x-svc-run-id')!;
      expect((await api.get(`/api/runs/${runId}`)).body.status).to.equal('failed');
    });

    it('still checks the gates and the input before streaming', async () => {
      const anonymous = await SseReader.open(`${service.url}/api/wf/typed`, { method: 'POST', json: { name: 'a' } });
      expect(anonymous.status).to.equal(401);
      const invalid = await SseReader.open(`${service.url}/api/wf/typed`, { token: admin, method: 'POST', json: { name: 1 } });
      expect(invalid.status).to.equal(422);
    });
  });
});
