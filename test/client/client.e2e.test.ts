// The client library (`svc/client`) against the real service over loopback: every method, every transport.
import { expect } from 'chai';
import { SvcAuth, SvcClient, SvcRequestError, SvcRunFailedError, SvcRunPendingError, type RunEvent, type StepFrame } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { CLIENT_PROJECT } from './support/project.js';
import { RecordingProxy } from './support/proxy.js';

/** What a promise rejects with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to fail, it succeeded');
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

describe('client library (svc/client) over loopback', function () {
  this.timeout(30_000);
  let service: Service;
  let proxy: RecordingProxy;
  let admin: Admin;
  let plain: { id: string; token: string };
  let client: SvcClient;

  before(async () => {
    service = await startTestService({ projectDir: CLIENT_PROJECT });
    proxy = await RecordingProxy.start(service.url);
    admin = await bootstrapAdmin(service.url);
    plain = await createUser(service.url, admin.token, 'plain@example.com', {});
    client = new SvcClient({ baseUrl: `${proxy.url}/`, token: admin.token });
  });
  after(async () => {
    await proxy?.close();
    await service?.close();
  });

  const acceptOf = (pathPrefix: string) => proxy.requestsTo(pathPrefix).at(-1)?.headers.accept;

  it('is importable as svc/client: the package entry (dist, built by npm install) exports the library', async () => {
    // A variable specifier: the type checker must not need dist/ to exist.
    const specifier = 'svc/client';
    const entry = (await import(specifier)) as Record<string, unknown>;
    expect(Object.keys(entry)).to.include.members(['SvcAuth', 'SvcClient', 'SvcRequestError', 'SvcRunFailedError', 'SvcRunPendingError']);
    const fromPackage = new (entry.SvcClient as typeof SvcClient)({ baseUrl: `${proxy.url}/`, token: admin.token });
    expect(await fromPackage.execute('echo', { payload: { text: 'entry' } })).to.deep.equal({ said: 'entry', loud: 'ENTRY' });
  });

  describe('SvcAuth', () => {
    it('logs in with a password, keeps the token, and reads the identity', async () => {
      const auth = new SvcAuth({ baseUrl: `${proxy.url}///` });
      const token = await auth.loginWithPassword(admin.email, admin.password);
      expect(token).to.include({ token_type: 'bearer', expires_in: 86400 });
      expect(auth.token).to.equal(token.access_token);
      const me = await auth.getMe();
      expect(me.user_id).to.equal(admin.userId);
      expect(me.scopes).to.include('iam:admin');
      expect(proxy.requestsTo('/auth/token').at(-1)?.headers['content-type']).to.equal('application/x-www-form-urlencoded');
    });

    it('refresh swaps the token (the old one is refused); logout ends the new one', async () => {
      const auth = new SvcAuth({ baseUrl: proxy.url });
      const first = (await auth.loginWithPassword(admin.email, admin.password)).access_token;
      const second = (await auth.refresh()).access_token;
      expect(second).to.not.equal(first);
      expect(auth.token).to.equal(second);
      const refused = await rejectionOf(auth.getMe(first));
      expect(refused).to.be.instanceOf(SvcRequestError);
      expect((refused as SvcRequestError).status).to.equal(401);
      await auth.logout();
      expect(auth.token).to.equal(undefined);
      expect(((await rejectionOf(auth.getMe(second))) as SvcRequestError).status).to.equal(401);
    });

    it('a wrong password is a SvcRequestError with status 401; the OAuth URL names the provider start route', async () => {
      const auth = new SvcAuth({ baseUrl: `${proxy.url}/` });
      const error = await rejectionOf(auth.loginWithPassword(admin.email, 'not the password'));
      expect(error).to.be.instanceOf(SvcRequestError);
      expect((error as SvcRequestError).status).to.equal(401);
      expect(auth.token).to.equal(undefined);
      expect(auth.getOAuthLoginUrl('github')).to.equal(`${proxy.url}/auth/oauth/github/start`);
    });
  });

  describe('execute', () => {
    it('REST by default, also with onProgress when the workflow has no slow steps (no frames then)', async () => {
      const frames: StepFrame[] = [];
      expect(await client.execute('echo', { payload: { text: 'hi' } })).to.deep.equal({ said: 'hi', loud: 'HI' });
      expect(acceptOf('/api/c/echo')).to.equal('application/json');
      expect(await client.execute('echo', { payload: { text: 'yo' }, onProgress: (f) => frames.push(f) })).to.deep.equal({ said: 'yo', loud: 'YO' });
      expect(acceptOf('/api/c/echo')).to.equal('application/json');
      expect(frames).to.deep.equal([]);
    });

    it('SSE automatically when onProgress is given and the manifest has slow steps', async () => {
      const manifest = await client.getManifest('probe');
      expect(manifest).to.include({ has_slow_steps: true });
      const frames: StepFrame[] = [];
      const output = await client.execute('probe', { payload: { url: `${service.url}/health` }, onProgress: (f) => frames.push(f) });
      expect(output).to.deep.equal({ health: 'ok' });
      expect(acceptOf('/api/c/probe')).to.equal('text/event-stream');
      expect(frames.map((f) => [f.event_type, f.step_id, f.kind])).to.deep.equal([
        ['step', 'call', 'APICall'],
        ['step', 'answer', 'Response'],
      ]);
      expect(frames[0]!.snapshot).to.include({ health: 'ok' });
    });

    it('SSE when mode is sse, with step frames and the output of done', async () => {
      const frames: StepFrame[] = [];
      expect(await client.execute('echo', { payload: { text: 'sse' }, mode: 'sse', onProgress: (f) => frames.push(f) })).to.deep.equal({
        said: 'sse',
        loud: 'SSE',
      });
      expect(acceptOf('/api/c/echo')).to.equal('text/event-stream');
      expect(frames.map((f) => f.step_id)).to.deep.equal(['shout', 'answer']);
      expect(frames[0]).to.include({ event_type: 'step', kind: 'Functional', signal: 'default' });
      expect(frames[0]!.snapshot).to.deep.include({ text: 'sse', loud: 'SSE' });
      expect(frames[0]!.duration_ms).to.be.a('number');
    });

    it('gRPC-Web when mode is grpc, with the same frames and output', async () => {
      const frames: StepFrame[] = [];
      const before = proxy.requestsTo('/grpc/').length;
      expect(await client.execute('echo', { payload: { text: 'grpc' }, mode: 'grpc', onProgress: (f) => frames.push(f) })).to.deep.equal({
        said: 'grpc',
        loud: 'GRPC',
      });
      const calls = proxy.requestsTo('/grpc/');
      expect(calls.length).to.equal(before + 1);
      expect(calls.at(-1)).to.include({ method: 'POST', path: '/grpc/svc.v1.Execution/RunWorkflow' });
      expect(calls.at(-1)!.headers['content-type']).to.match(/^application\/grpc-web/);
      expect(frames.map((f) => [f.event_type, f.step_id, f.kind, f.signal])).to.deep.equal([
        ['step', 'shout', 'Functional', 'default'],
        ['step', 'answer', 'Response', 'default'],
      ]);
      expect(frames[0]!.snapshot).to.deep.include({ text: 'grpc', loud: 'GRPC' });
    });

    it('a GET trigger sends the payload as the query string', async () => {
      expect(await client.execute('lookup', { payload: { text: 'query' } })).to.deep.equal({ loud: 'QUERY' });
      expect(proxy.requestsTo('/api/c/lookup').at(-1)).to.include({ method: 'GET', path: '/api/c/lookup?text=query' });
    });

    for (const mode of ['rest', 'sse', 'grpc'] as const) {
      it(`a failed run is a SvcRunFailedError with the run id (${mode})`, async () => {
        const error = await rejectionOf(client.execute('echo', { payload: { text: 'fail' }, mode }));
        expect(error, String(error)).to.be.instanceOf(SvcRunFailedError);
        const failed = error as SvcRunFailedError;
        expect(failed.message).to.match(/shout was told to fail/);
        expect(failed.runId).to.be.a('string');
        expect((await client.runs.get(failed.runId!)).status).to.equal('failed');
        if (mode === 'rest') expect(failed.envelope).to.include({ success: false, status_code: 500 });
      });

      it(`a run that waits for a human is a SvcRunPendingError carrying the run descriptor (${mode})`, async () => {
        const error = await rejectionOf(client.execute('review', { payload: { subject: mode }, mode }));
        expect(error, String(error)).to.be.instanceOf(SvcRunPendingError);
        const { run } = error as SvcRunPendingError;
        expect(run).to.include({ workflow: 'review', status: 'waiting_human' });
        expect(run.approval).to.include({ kind: 'human', title: 'Approve the subject' });
        expect(run.status_url).to.equal(`/api/runs/${run.id}`);
      });

      it(`a refused call is a SvcRequestError: 401 without a token, 403 without the scope, 422 for bad input (${mode})`, async () => {
        const anonymous = new SvcClient({ baseUrl: proxy.url });
        expect(((await rejectionOf(anonymous.execute('echo', { payload: { text: 'x' }, mode }))) as SvcRequestError).status).to.equal(401);
        const denied = await rejectionOf(client.execute('special', { payload: { text: 'x' }, mode, token: plain.token }));
        expect(denied, String(denied)).to.be.instanceOf(SvcRequestError);
        expect((denied as SvcRequestError).status).to.equal(403);
        const invalid = await rejectionOf(client.execute('echo', { payload: { text: 42 }, mode }));
        expect(invalid, String(invalid)).to.be.instanceOf(SvcRequestError);
        expect((invalid as SvcRequestError).status).to.equal(422);
        expect(invalid.message).to.match(/string_type|valid string/);
      });
    }

    it('an aborted signal cancels the call', async () => {
      const controller = new AbortController();
      controller.abort();
      const error = await rejectionOf(client.execute('echo', { payload: { text: 'never' }, signal: controller.signal }));
      expect(error.name).to.equal('AbortError');
    });
  });

  it('execute with idempotencyKey: a retry starts no second run and answers the same output', async () => {
    const before = (await client.runs.list({ workflow: 'echo', limit: 1000 })).length;
    const key = `retry-${Date.now()}`;
    const first = await client.execute('echo', { payload: { text: 'once' }, idempotencyKey: key });
    expect(await client.execute('echo', { payload: { text: 'once' }, idempotencyKey: key, mode: 'sse' })).to.deep.equal(first);
    expect(await client.execute('echo', { payload: { text: 'once' }, idempotencyKey: key })).to.deep.equal(first);
    expect((await client.runs.list({ workflow: 'echo', limit: 1000 })).length).to.equal(before + 1);
    const refused = (await rejectionOf(client.execute('echo', { payload: { text: 'twice' }, idempotencyKey: key }))) as SvcRequestError;
    expect([refused.status, (refused.body as { code: string }).code]).to.deep.equal([422, 'IDEMPOTENCY_KEY_REUSED']);
  });

  describe('manifests and tokens', () => {
    it('caches manifests for the TTL; invalidateManifest and a TTL of 0 read them again', async () => {
      const manifestReads = () => proxy.requestsTo('/api/_system/workflows/echo').length;
      const cached = new SvcClient({ baseUrl: proxy.url, token: admin.token });
      const start = manifestReads();
      await cached.execute('echo', { payload: { text: 'a' } });
      await cached.execute('echo', { payload: { text: 'b' } });
      expect(manifestReads() - start).to.equal(1);
      cached.invalidateManifest('echo');
      await cached.execute('echo', { payload: { text: 'c' } });
      expect(manifestReads() - start).to.equal(2);
      cached.invalidateManifest();
      await cached.getManifest('echo');
      expect(manifestReads() - start).to.equal(3);

      const uncached = new SvcClient({ baseUrl: proxy.url, token: admin.token, manifestCacheTtl: 0 });
      await uncached.execute('echo', { payload: { text: 'd' } });
      await uncached.execute('echo', { payload: { text: 'e' } });
      expect(manifestReads() - start).to.equal(5);
    });

    it('getManifest answers the manifest; listWorkflows every workflow; an unknown name is a 404 SvcRequestError', async () => {
      const manifest = await client.getManifest('echo');
      expect(manifest).to.deep.include({ name: 'echo', trigger_path: '/api/c/echo', trigger_method: 'POST', has_slow_steps: false });
      expect(manifest.steps).to.deep.equal([
        { id: 'shout', kind: 'Functional', routes: {} },
        { id: 'answer', kind: 'Response', routes: {} },
      ]);
      expect(Object.keys(await client.listWorkflows()).sort()).to.deep.equal(['echo', 'lookup', 'probe', 'review', 'special']);
      expect(((await rejectionOf(client.getManifest('nope'))) as SvcRequestError).status).to.equal(404);
    });

    it('setToken replaces the default token; a per-call token wins over it', async () => {
      const later = new SvcClient({ baseUrl: proxy.url });
      expect(((await rejectionOf(later.execute('echo', { payload: { text: 'x' } }))) as SvcRequestError).status).to.equal(401);
      later.setToken(admin.token);
      expect(await later.execute('echo', { payload: { text: 'x' } })).to.deep.equal({ said: 'x', loud: 'X' });
      expect(((await rejectionOf(later.execute('special', { payload: {}, token: plain.token }))) as SvcRequestError).status).to.equal(403);
    });
  });

  describe('runs', () => {
    let runId: string;

    before(async () => {
      await client.execute('echo', { payload: { text: 'listed' } });
      runId = (await client.runs.list({ workflow: 'echo', status: 'completed', limit: 1 }))[0]!.id;
    });

    it('list filters by workflow and status and pages; get answers the descriptor', async () => {
      const runs = await client.runs.list({ workflow: 'echo', limit: 2 });
      expect(runs).to.have.length(2);
      expect(runs.every((r) => r.workflow === 'echo')).to.equal(true);
      const next = await client.runs.list({ workflow: 'echo', limit: 2, offset: 2 });
      expect(next.map((r) => r.id)).to.not.include.members(runs.map((r) => r.id));
      expect((await client.runs.list({ workflow: 'review', status: 'waiting_human' })).every((r) => r.status === 'waiting_human')).to.equal(true);
      const run = await client.runs.get(runId);
      expect(run).to.include({ id: runId, workflow: 'echo', status: 'completed' });
      const page = await client.runs.page({ workflow: 'echo', status: ['completed', 'failed'], createdBefore: new Date(Date.now() + 60_000), limit: 1 });
      expect(page.runs.map((r) => r.id)).to.deep.equal([runs[0]!.id]);
      expect(page.nextCursor).to.be.a('string');
      expect((await client.runs.page({ workflow: 'echo', limit: 1, cursor: page.nextCursor })).runs.map((r) => r.id)).to.deep.equal([runs[1]!.id]);
      const every: string[] = [];
      for await (const each of client.runs.iterate({ workflow: 'echo', limit: 1 })) every.push(each.id);
      expect(every).to.deep.equal((await client.runs.list({ workflow: 'echo', limit: 1000 })).map((r) => r.id));
      expect(every.length).to.be.greaterThan(2);
      expect(run.output).to.deep.equal({ said: 'listed', loud: 'LISTED' });
    });

    it('export answers the svc.run/v1 document with the journal', async () => {
      const exported = await client.runs.export(runId);
      expect(exported.format).to.equal('svc.run/v1');
      expect(exported.run.id).to.equal(runId);
      expect(exported.workflow).to.include({ name: 'echo', schema_version: 'v1' });
      expect(exported.events.map((e) => e.seq)).to.deep.equal(exported.events.map((_, i) => i + 1));
      expect(exported.events.at(-1)!.type).to.equal('run_completed');
    });

    it('events iterates the journal in order and ends after the terminal event; fromSeq resumes after a seq', async () => {
      const events = await collect(client.runs.events(runId));
      expect(events.map((e) => e.seq)).to.deep.equal(events.map((_, i) => i + 1));
      expect(events[0]!.type).to.equal('run_started');
      expect(events.at(-1)!.type).to.equal('run_completed');
      const tail = await collect(client.runs.events(runId, { fromSeq: 3 }));
      expect(tail.map((e) => e.seq)).to.deep.equal(events.slice(3).map((e) => e.seq));
    });

    it('events resumes a dropped stream with Last-Event-ID: every event once, none lost', async () => {
      const pending = (await rejectionOf(client.execute('review', { payload: { subject: 'resume' } }))) as SvcRunPendingError;
      const id = pending.run.id;
      const seen: RunEvent[] = [];
      proxy.holdNextEventStream(2);
      const following = (async () => {
        for await (const event of client.runs.events(id)) {
          seen.push(event);
          // The connection drops once the client holds the two relayed events, none before.
          if (seen.length === 2) proxy.dropHeldStream();
          if (seen.length === 3) await client.approvals.decide(pending.run.approval!.approval_id, { decision: 'approve', values: { note: 'go' } });
        }
      })();
      await following;
      expect(seen.map((e) => e.seq)).to.deep.equal(seen.map((_, i) => i + 1));
      expect(seen.at(-1)!.type).to.equal('run_completed');
      const streams = proxy.requestsTo(`/api/runs/${id}/events`);
      expect(streams.length).to.be.at.least(2);
      expect(streams[0]!.headers['last-event-id']).to.equal(undefined);
      expect(streams[1]!.headers['last-event-id']).to.equal('2');
    });

    it('pause, resume, steer and abort a waiting run; control of a finished run is a 409 SvcRequestError', async () => {
      const { run } = (await rejectionOf(client.execute('review', { payload: { subject: 'control' } }))) as SvcRunPendingError;
      expect((await client.runs.pause(run.id)).status).to.equal('paused');
      expect((await client.runs.resume(run.id)).status).to.not.equal('paused');
      await client.runs.steer(run.id, 'look at the subject again');
      expect((await client.runs.abort(run.id, 'no longer needed')).status).to.equal('aborted');
      const journal = await collect(client.runs.events(run.id));
      expect(journal.map((e) => e.type)).to.include.members(['paused', 'resumed', 'steered', 'run_aborted']);
      expect(journal.find((e) => e.type === 'steered')!.payload).to.include({ message: 'look at the subject again' });
      expect(journal.find((e) => e.type === 'run_aborted')!.payload).to.include({ reason: 'no longer needed' });
      const refused = await rejectionOf(client.runs.pause(run.id));
      expect(refused).to.be.instanceOf(SvcRequestError);
      expect((refused as SvcRequestError).status).to.equal(409);
    });
  });

  describe('approvals', () => {
    it('list shows the pending approval; decide continues the run; a second decision is a 409', async () => {
      const { run } = (await rejectionOf(client.execute('review', { payload: { subject: 'ship it' } }))) as SvcRunPendingError;
      const approvalId = run.approval!.approval_id;
      const listed = (await client.approvals.list()).find((a) => a.approval_id === approvalId);
      expect(listed).to.include({ run_id: run.id, step_id: 'confirm', status: 'pending', title: 'Approve the subject' });
      const invalid = await rejectionOf(client.approvals.decide(approvalId, { decision: 'approve', values: {} }));
      expect((invalid as SvcRequestError).status).to.equal(422);
      const decided = await client.approvals.decide(approvalId, { decision: 'approve', values: { note: 'fine' } });
      expect(decided).to.include({ approval_id: approvalId, status: 'decided', decision: 'approve', decided_by: admin.userId });
      const events = await collect(client.runs.events(run.id));
      expect(events.at(-1)!.type).to.equal('run_completed');
      expect((await client.runs.get(run.id)).output).to.deep.equal({ subject: 'ship it', outcome: 'approve', note: 'fine' });
      expect(((await rejectionOf(client.approvals.decide(approvalId, { decision: 'reject', values: { note: 'late' } }))) as SvcRequestError).status).to.equal(
        409,
      );
      expect((await client.approvals.list()).some((a) => a.approval_id === approvalId)).to.equal(false);
    });
  });

  describe('crud', () => {
    it('create, get, list with filters, include, limit and offset, update, delete', async () => {
      const authors = client.crud('Author');
      const notes = client.crud<{ id: string; title: string; stars: number | null; author_id: string | null; author?: { name: string } | null }>('note');
      const ada = await authors.create({ name: 'Ada' });
      const created = await notes.create({ title: 'first', stars: 3, author_id: ada.id as string });
      await notes.create({ title: 'second', stars: 5 });
      await notes.create({ title: 'third', stars: 5 });
      expect(created).to.include({ title: 'first', stars: 3 });
      expect(await notes.get(created.id)).to.include({ id: created.id, title: 'first' });
      expect((await notes.get(created.id, ['author'])).author).to.include({ name: 'Ada' });

      const fives = await notes.list({ filters: { stars: 5 } });
      expect(fives.map((n) => n.title).sort()).to.deep.equal(['second', 'third']);
      const withAuthor = await notes.list({ filters: { title: 'first' }, include: ['author'] });
      expect(withAuthor[0]!.author).to.include({ name: 'Ada' });
      const all = await notes.list();
      expect(all).to.have.length(3);
      expect(await notes.list({ limit: 1, offset: 1 })).to.deep.equal([all[1]]);

      expect(await notes.update(created.id, { stars: 4 })).to.include({ id: created.id, stars: 4, title: 'first' });
      expect(await notes.delete(created.id)).to.equal(undefined);
      const gone = await rejectionOf(notes.get(created.id));
      expect(gone).to.be.instanceOf(Error);
      expect((gone as SvcRequestError).status).to.equal(404);
    });

    it('any non-2xx answer throws: an operation the model does not offer, bad input, a missing scope', async () => {
      expect(((await rejectionOf(client.crud('author').delete('00000000-0000-4000-8000-000000000000'))) as SvcRequestError).status).to.equal(404);
      expect(((await rejectionOf(client.crud('note').create({ stars: 1 }))) as SvcRequestError).status).to.equal(422);
      const stranger = new SvcClient({ baseUrl: proxy.url, token: plain.token });
      expect(((await rejectionOf(stranger.crud('note').list())) as SvcRequestError).status).to.equal(403);
    });
  });
});
