// Step kinds and routing over HTTP: Functional, Router, Response, ModelOp, APICall; signals, output precedence, `_` keys.
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { expectNoPrivateKeys, journalOf } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { ENGINE_PROJECT, FakeServer, sendJson, SIGNING_KEY } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

describe('workflow steps over HTTP', function () {
  this.timeout(30_000);
  let service: Service;
  let pool: Pool;
  let token: string;
  let api: ReturnType<typeof client>;
  const fake = new FakeServer();

  /** Triggers a workflow on its own path and checks that no answer carries engine-owned keys. */
  async function trigger(path: string, input: unknown) {
    const result = await api.post(path, input);
    expectNoPrivateKeys(result.body, `${path} answer`);
    return result;
  }

  before(async function () {
    this.timeout(60_000);
    await fake.start();
    const databaseUrl = await createTestDatabase();
    pool = createPool({ connectionString: databaseUrl, max: 2 });
    service = await startTestService({ databaseUrl, projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    token = (await bootstrapAdmin(service.url)).token;
    api = client(service.url, token);
  });
  after(async () => {
    await service?.close();
    await pool?.end();
    await fake.stop();
  });

  describe('Functional', () => {
    it('merges returned objects, routes {context, signal}, renders params (a lone template keeps its JSON type) and answers the public keys', async () => {
      const result = await trigger('/api/workflows/functional/runs', { count: 3, nested: { inner: [10, 20], flag: true } });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.headers.get('x-svc-run-id')).to.match(UUID);
      expect(result.body).to.deep.equal({
        count: 100,
        nested: { inner: [10, 20], flag: true },
        merged: true,
        via_both: 'yes',
        echoed: {
          n: 100,
          obj: { inner: [10, 20], flag: true },
          deep: 10,
          text: 'count=100 inner=[10,20] flag=true',
          missing: null,
          list: [true, 1],
          literal: 7,
        },
      });
      const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
      expect(journal.filter((e) => e.type === 'step_completed').map((e) => [e.agent_id, e.payload.signal])).to.deep.equal([
        ['merge', 'default'],
        ['both', 'go'],
        ['echo', 'default'],
      ]);
      expectNoPrivateKeys(journal, 'journal');
    });

    it('a mapped signal jumps; an unmapped default falls through to the next step', async () => {
      const jumped = await trigger('/api/wf/route', { want: 'jump' });
      expect(jumped.status).to.equal(201);
      expect(jumped.body).to.deep.equal({ want: 'jump', trail: ['jumped'] });
      const fell = await trigger('/api/wf/route', { want: 'default' });
      expect(fell.status).to.equal(201);
      expect(fell.body).to.deep.equal({ want: 'default', trail: ['fell'] });
    });

    it('another unmapped signal fails the run with the 500 envelope', async () => {
      const result = await trigger('/api/wf/route', { want: 'sideways' });
      expect(result.status).to.equal(500);
      expect(result.body).to.deep.include({ success: false, status_code: 500, data: { want: 'sideways' } });
      expect(result.body.error.message).to.match(/signal "sideways" of step pick is not routed/);
      const run = await api.get(`/api/runs/${result.headers.get('x-svc-run-id')}`);
      expect(run.body.status).to.equal('failed');
    });

    it('a throw with an unmapped error fails the run with the 500 envelope carrying the message', async () => {
      const result = await trigger('/api/wf/route', { want: 'throw' });
      expect(result.status).to.equal(500);
      expect(result.body).to.deep.include({ success: false, status_code: 500 });
      expect(result.body.error.message).to.equal('thrown by act');
      const runId = result.headers.get('x-svc-run-id')!;
      expect((await api.get(`/api/runs/${runId}`)).body.status).to.equal('failed');
      const journal = await journalOf(service.url, token, runId);
      const failed = journal.find((e) => e.type === 'step_failed');
      expect(failed).to.deep.include({ agent_id: 'pick', engine: 'Functional' });
      expect(failed.payload.signal).to.equal('error');
      expect(failed.payload.error.message).to.equal('thrown by act');
      expect(journal.at(-1).type).to.equal('run_failed');
      expect(journal.map((e) => e.agent_id)).to.not.include('fell');
    });

    it('a throw sets _last_error, which an error route can read (Response mapping)', async () => {
      const result = await trigger('/api/wf/errors', { handle: true });
      expect(result.status).to.equal(502);
      expect(result.body).to.deep.equal({ message: 'thrown by act', step: 'fail_handled' });
    });

    it('an error routed to END with _last_error answers the 400 envelope', async () => {
      const result = await trigger('/api/wf/errors', { handle: false });
      expect(result.status, JSON.stringify(result.body)).to.equal(400);
      expect(result.body).to.deep.equal({
        success: false,
        status_code: 400,
        data: { handle: false },
        error: { message: 'thrown by act', details: 'fail_to_end' },
      });
    });
  });

  describe('a Router loop', () => {
    it('gives each visit of a Functional step its own idempotency key (the first is <run>:<step>)', async () => {
      const result = await trigger('/api/wf/loop', {});
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      const runId = result.headers.get('x-svc-run-id')!;
      expect(result.body).to.deep.equal([`${runId}:visit`, `${runId}:visit:1`, `${runId}:visit:2`]);
    });
  });

  describe('Router', () => {
    const cases: [string, unknown, unknown, boolean][] = [
      ['eq', 5, 5, true],
      ['eq', 'a', 'b', false],
      ['eq', { a: [1] }, { a: [1] }, true],
      ['eq', 5, '5', false],
      ['neq', 5, 6, true],
      ['neq', 5, 5, false],
      ['gt', 5, 3, true],
      ['gt', 5, 5, false],
      ['gt', '10', 9, true],
      ['gte', 5, 5, true],
      ['gte', 4, 5, false],
      ['lt', 3, 5, true],
      ['lt', 'a', 'b', true],
      ['lt', 5, 3, false],
      ['lte', 5, 5, true],
      ['lte', 6, 5, false],
      ['in', 2, [1, 2, 3], true],
      ['in', 4, [1, 2, 3], false],
      ['in', 'x', 'xyz', false],
      ['contains', 'hello world', 'world', true],
      ['contains', 'hello', 'world', false],
      ['contains', [1, 2], 2, true],
      ['contains', [1, 2], 3, false],
      ['is_empty', '', null, true],
      ['is_empty', [], null, true],
      ['is_empty', {}, null, true],
      ['is_empty', undefined, null, true],
      ['is_empty', 0, null, false],
      ['is_empty', 'a', null, false],
      ['is_not_empty', 'a', null, true],
      ['is_not_empty', [], null, false],
      ['is_not_empty', undefined, null, false],
    ];
    for (const [op, value, arg, expected] of cases) {
      it(`${op}: ${JSON.stringify(value) ?? 'absent'} vs ${JSON.stringify(arg)} -> ${expected}`, async () => {
        const result = await trigger('/api/wf/router', { op, ...(value !== undefined ? { value } : {}), arg });
        expect(result.status, JSON.stringify(result.body)).to.equal(201);
        expect(result.body).to.equal(expected);
      });
    }

    it('match without a routed value signals default and falls through', async () => {
      const result = await trigger('/api/wf/router', { op: 'nothing-like-it' });
      expect(result.status).to.equal(201);
      expect(result.body).to.equal('unmatched');
    });

    it('journals each decision with its source', async () => {
      const result = await trigger('/api/wf/router', { op: 'gt', value: 1, arg: 2 });
      const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
      const decisions = journal.filter((e) => e.type === 'decision').map((e) => ({ agent_id: e.agent_id, engine: e.engine, payload: e.payload }));
      expect(decisions).to.deep.equal([
        { agent_id: 'dispatch', engine: 'Router', payload: { decision: 'gt', source: 'router' } },
        { agent_id: 'gt', engine: 'Router', payload: { decision: 'false', source: 'router' } },
      ]);
      const types = journal.map((e) => `${e.type}:${e.agent_id}`);
      expect(types.indexOf('decision:gt')).to.be.lessThan(types.indexOf('step_completed:gt'));
    });
  });

  describe('Response and output precedence', () => {
    it('source answers the value at the path with the status_code', async () => {
      const result = await trigger('/api/wf/respond', { mode: 'source' });
      expect(result.status).to.equal(200);
      expect(result.body).to.deep.equal({ name: 'widget', size: 3 });
    });

    it('mapping builds an object (absent paths are null) with status 201 by default, ahead of spec.output', async () => {
      const result = await trigger('/api/wf/respond', { mode: 'mapping' });
      expect(result.status).to.equal(201);
      expect(result.body).to.deep.equal({ label: 'widget', size: 3, absent: null });
    });

    it('without a Response step, the spec.output key is the answer', async () => {
      const result = await trigger('/api/wf/respond', { mode: 'output_key' });
      expect(result.status).to.equal(201);
      expect(result.body).to.deep.equal({ name: 'widget', size: 3 });
      const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
      expect(journal.at(-1)).to.deep.include({ type: 'run_completed' });
      expect(journal.at(-1).payload.output).to.deep.equal({ name: 'widget', size: 3 });
      expectNoPrivateKeys(journal, 'journal');
    });

    it('an output matching response_schema is served; a mismatch is the 500 envelope', async () => {
      const good = await trigger('/api/wf/checked', { good: true });
      expect(good.status).to.equal(201);
      expect(good.body).to.deep.equal({ ok: true });
      const bad = await trigger('/api/wf/checked', { good: 'yes' });
      expect(bad.status).to.equal(500);
      expect(bad.body).to.deep.include({ success: false, status_code: 500 });
      expect(bad.body.error.message).to.equal('the response does not match response_schema');
      expect(bad.body.error.details).to.match(/ok/);
    });
  });

  describe('ModelOp', () => {
    let noteId: string;
    const countNotes = async () => Number((await pool.query('SELECT count(*) AS n FROM wf_notes')).rows[0].n);

    it('create writes a record and answers it; the record event and step_completed share one transaction', async () => {
      const result = await trigger('/api/wf/notes', { op: 'create', title: 'first', size: 2 });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body).to.include({ title: 'first', size: 2 });
      expect(result.body.id).to.match(UUID);
      noteId = result.body.id;
      const row = (await pool.query('SELECT title, size FROM wf_notes WHERE id = $1', [noteId])).rows[0];
      expect(row).to.deep.equal({ title: 'first', size: 2 });
      const runId = result.headers.get('x-svc-run-id')!;
      const { rows } = await pool.query<{ stream_id: string; type: string; agent: string | null; tx: string }>(
        `SELECT stream_id, type, data->>'agent_id' AS agent, transaction_id::text AS tx FROM events
         WHERE stream_id = $1 OR stream_id LIKE $2 ORDER BY global_position`,
        [`run-${runId}`, `record-%-${noteId}`],
      );
      const recordEvent = rows.find((r) => r.stream_id.startsWith('record-'));
      const stepEvent = rows.find((r) => r.type === 'step_completed' && r.agent === 'create');
      expect(recordEvent, JSON.stringify(rows)).to.not.equal(undefined);
      expect(stepEvent, JSON.stringify(rows)).to.not.equal(undefined);
      expect(recordEvent!.tx).to.equal(stepEvent!.tx);
    });

    it('read answers the record, an absent id signals not_found', async () => {
      const found = await trigger('/api/wf/notes', { op: 'read', id: noteId });
      expect(found.status).to.equal(201);
      expect(found.body).to.include({ id: noteId, title: 'first', size: 2 });
      const missing = await trigger('/api/wf/notes', { op: 'read', id: ABSENT_ID });
      expect(missing.status).to.equal(404);
      expect(missing.body).to.deep.equal({ missing: ABSENT_ID });
    });

    it('list answers the records', async () => {
      await trigger('/api/wf/notes', { op: 'create', title: 'second' });
      const listed = await trigger('/api/wf/notes', { op: 'list' });
      expect(listed.status).to.equal(200);
      expect(listed.body.map((n: { title: string }) => n.title).sort()).to.deep.equal(['first', 'second']);
    });

    it('update changes the record, an absent id signals not_found', async () => {
      const updated = await trigger('/api/wf/notes', { op: 'update', id: noteId, size: 9 });
      expect(updated.status, JSON.stringify(updated.body)).to.equal(201);
      expect(updated.body).to.include({ id: noteId, title: 'first', size: 9 });
      expect((await pool.query('SELECT size FROM wf_notes WHERE id = $1', [noteId])).rows[0].size).to.equal(9);
      const missing = await trigger('/api/wf/notes', { op: 'update', id: ABSENT_ID, size: 1 });
      expect(missing.status).to.equal(404);
    });

    it('an invalid payload signals error with _last_error and writes nothing', async () => {
      const before = await countNotes();
      const wrongType = await trigger('/api/wf/notes', { op: 'create', title: 42 });
      expect(wrongType.status, JSON.stringify(wrongType.body)).to.equal(422);
      expect(wrongType.body.error).to.equal('payload is invalid');
      expect(wrongType.body.detail).to.be.an('array').that.is.not.empty;
      const missingRequired = await trigger('/api/wf/notes', { op: 'create', size: 1 });
      expect(missingRequired.status).to.equal(422);
      const badUpdate = await trigger('/api/wf/notes', { op: 'update', id: noteId, size: 'big' });
      expect(badUpdate.status).to.equal(422);
      expect(await countNotes()).to.equal(before);
      expect((await pool.query('SELECT size FROM wf_notes WHERE id = $1', [noteId])).rows[0].size).to.equal(9);
    });

    it('delete removes the record; a second delete signals not_found', async () => {
      const deleted = await trigger('/api/wf/notes', { op: 'delete', id: noteId });
      expect(deleted.status).to.equal(201);
      expect(deleted.body).to.deep.equal({ id: noteId, deleted: true });
      expect((await pool.query('SELECT 1 FROM wf_notes WHERE id = $1', [noteId])).rowCount).to.equal(0);
      expect((await trigger('/api/wf/notes', { op: 'delete', id: noteId })).status).to.equal(404);
      expect((await trigger('/api/wf/notes', { op: 'read', id: noteId })).status).to.equal(404);
    });
  });

  describe('APICall', () => {
    before(() => {
      fake.on('/ok', (_req, res) => sendJson(res, 200, { data: { value: 'v', list: ['a', 'b'] } }));
      let flaky = 0;
      fake.on('/flaky', (_req, res) => (++flaky <= 2 ? sendJson(res, 503, { busy: true }) : sendJson(res, 200, { data: { value: 'late' } })));
      fake.on('/hang', () => undefined);
      fake.on('/gone', (_req, res) => sendJson(res, 404, { nope: true }));
    });

    it('sends the rendered request, extracts into the context and stores the whole body under output_key', async () => {
      const url = `${fake.url}/ok`;
      const result = await trigger('/api/wf/fetch', { url, token: 'tok-123' });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body).to.deep.equal({ value: 'v', second: 'b', raw: { data: { value: 'v', list: ['a', 'b'] } } });
      const [seen] = fake.hits('/ok');
      expect(seen!.method).to.equal('POST');
      expect(seen!.headers.authorization).to.equal('Bearer tok-123');
      expect(seen!.headers['x-trace']).to.equal('trace-1');
      expect(seen!.headers['content-type']).to.equal('application/json');
      expect(JSON.parse(seen!.body)).to.deep.equal({ asked: url, n: 2 });
    });

    it('journals request and response, with the Authorization header redacted', async () => {
      const url = `${fake.url}/ok`;
      const result = await trigger('/api/wf/fetch', { url, token: 'tok-456' });
      const runId = result.headers.get('x-svc-run-id')!;
      const journal = await journalOf(service.url, token, runId);
      const completed = journal.find((e) => e.type === 'step_completed' && e.agent_id === 'call');
      expect(completed.engine).to.equal('APICall');
      expect(completed.payload.request).to.deep.equal({
        method: 'POST',
        url,
        headers: { Authorization: '[redacted]', 'X-Trace': 'trace-1', 'content-type': 'application/json' },
        body: { asked: url, n: 2 },
      });
      expect(completed.payload.response).to.deep.equal({ status: 200, body: { data: { value: 'v', list: ['a', 'b'] } } });
      expect(completed.payload.attempts).to.equal(1);
      const exported = await api.get(`/api/runs/${runId}/export`);
      expect(exported.status).to.equal(200);
      const exportedCall = exported.body.events.find((e: any) => e.type === 'step_completed' && e.agent_id === 'call');
      expect(exportedCall.payload.request.headers.Authorization).to.equal('[redacted]');
      expect(JSON.stringify(exportedCall)).to.not.include('tok-456');
      expectNoPrivateKeys(exported.body.events, 'export events');
    });

    it('retries on 5xx and succeeds', async () => {
      const result = await trigger('/api/wf/fetch', { url: `${fake.url}/flaky` });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body.value).to.equal('late');
      expect(fake.hits('/flaky')).to.have.length(3);
      const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
      expect(journal.find((e) => e.type === 'step_completed' && e.agent_id === 'call').payload.attempts).to.equal(3);
    });

    it('a timeout signals error (routed here to a 502 Response) after the retries', async () => {
      // /hang never answers: an answer at all means each attempt timed out.
      const result = await trigger('/api/wf/fetch', { url: `${fake.url}/hang` });
      expect(result.status, JSON.stringify(result.body)).to.equal(502);
      expect(result.body.error).to.match(/timed out after 300 ms/);
      expect(fake.hits('/hang')).to.have.length(3);
      const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
      const failed = journal.find((e) => e.type === 'step_failed' && e.agent_id === 'call');
      expect(failed.payload.signal).to.equal('error');
      expect(failed.payload.failure).to.match(/timed out/);
      expect(failed.payload.request.url).to.equal(`${fake.url}/hang`);
    });

    it('a 4xx signals error at once, without retries', async () => {
      const result = await trigger('/api/wf/fetch', { url: `${fake.url}/gone` });
      expect(result.status).to.equal(502);
      expect(result.body.error).to.match(/HTTP 404/);
      expect(fake.hits('/gone')).to.have.length(1);
    });
  });

  describe('engine-owned keys', () => {
    it('never appear in the run descriptor, the journal over SSE, the export or the client step stream', async () => {
      const result = await trigger('/api/workflows/functional/runs', { count: 1 });
      const runId = result.headers.get('x-svc-run-id')!;
      const descriptor = await api.get(`/api/runs/${runId}`);
      expectNoPrivateKeys(descriptor.body, 'run descriptor');
      expectNoPrivateKeys((await api.get('/api/runs')).body, 'run list');
      const live = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token });
      const frames = await live.readToEnd();
      expect(frames.length).to.be.greaterThan(3);
      for (const frame of frames) expectNoPrivateKeys(frame.data, `frame ${frame.event}`);
      expect(live.text).to.not.include('engine-only');
      const exported = await api.get(`/api/runs/${runId}/export`);
      expectNoPrivateKeys(exported.body.events, 'export events');
      expectNoPrivateKeys(exported.body.run, 'export run');
      const streamed = await SseReader.open(`${service.url}/api/wf/respond`, { token, method: 'POST', json: { mode: 'mapping' } });
      const stepFrames = await streamed.readToEnd();
      expect(stepFrames.at(-1)!.event).to.equal('done');
      for (const frame of stepFrames) expectNoPrivateKeys(frame.data, `step frame ${frame.event}`);
      expect(streamed.text).to.not.include('hidden');
    });
  });
});
