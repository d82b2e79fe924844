// The runs API: list and detail with ownership, the journal over SSE (replay, live, resume), and run control.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectUnauthenticated } from '../support/http.js';
import { expectNoPrivateKeys, journalOf, waitForEvent, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { SseReader } from '../support/sse.js';
import { createUser } from '../support/users.js';
import { ENGINE_PROJECT, SIGNING_KEY } from './helpers.js';

const ABSENT_ID = '00000000-0000-4000-8000-000000000000';
describe('runs over HTTP', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: string;
  let owner: { id: string; token: string };
  let peer: { id: string; token: string };
  let operator: { id: string; token: string };
  const ownerRuns = { completed: '', failed: '', typed: '' };
  let peerRun: string;

  const runAs = async (token: string, path: string, input: unknown) => {
    const result = await call(service.url, 'POST', path, { token, json: input });
    expect(result.status, JSON.stringify(result.body)).to.be.oneOf([201, 202, 500]);
    return result.headers.get('x-svc-run-id')!;
  };

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: ENGINE_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    admin = (await bootstrapAdmin(service.url)).token;
    owner = await createUser(service.url, admin, 'owner@example.com', { run_readers: ['runs:read'] });
    peer = await createUser(service.url, admin, 'peer@example.com', { run_readers: ['runs:read'] });
    operator = await createUser(service.url, admin, 'operator@example.com', { run_operators: ['runs:control'] });
    ownerRuns.completed = await runAs(owner.token, '/api/wf/route', { want: 'jump' });
    ownerRuns.failed = await runAs(owner.token, '/api/wf/route', { want: 'sideways' });
    ownerRuns.typed = await runAs(owner.token, '/api/wf/typed', { name: 'n' });
    peerRun = await runAs(peer.token, '/api/wf/route', { want: 'default' });
  });
  after(async () => {
    await service?.close();
  });

  describe('GET /api/runs and /api/runs/{id}', () => {
    it('lists only the caller’s own runs, newest first, as descriptors', async () => {
      const mine = await client(service.url, owner.token).get('/api/runs');
      expect(mine.status).to.equal(200);
      expect(mine.body.map((r: { id: string }) => r.id)).to.deep.equal([ownerRuns.typed, ownerRuns.failed, ownerRuns.completed]);
      for (const run of mine.body) {
        expect(run).to.have.all.keys(
          'id',
          'workflow',
          'schema_version',
          'status',
          'input',
          'output',
          'error',
          'current_step',
          'pause_requested',
          'wake_at',
          'created_at',
          'updated_at',
          'status_url',
          'events_url',
          'approval',
          'trigger',
          'parent_run_id',
        );
        expect(['api', 'http'], 'how the run was started').to.include(run.trigger.type);
      }
      const theirs = await client(service.url, peer.token).get('/api/runs');
      expect(theirs.body.map((r: { id: string }) => r.id)).to.deep.equal([peerRun]);
      expect((await client(service.url, operator.token).get('/api/runs')).body).to.deep.equal([]);
    });

    it('iam:admin sees every run', async () => {
      const all = await client(service.url, admin).get('/api/runs?limit=1000');
      const ids = all.body.map((r: { id: string }) => r.id);
      expect(ids).to.include.members([...Object.values(ownerRuns), peerRun]);
    });

    it('filters by workflow and status, pages with limit and offset', async () => {
      const as = client(service.url, owner.token);
      const ids = async (query: string) => (await as.get(`/api/runs?${query}`)).body.map((r: { id: string }) => r.id);
      expect(await ids('workflow=route')).to.deep.equal([ownerRuns.failed, ownerRuns.completed]);
      expect(await ids('status=failed')).to.deep.equal([ownerRuns.failed]);
      expect(await ids('workflow=route&status=completed')).to.deep.equal([ownerRuns.completed]);
      expect(await ids('workflow=typed&status=failed')).to.deep.equal([]);
      expect(await ids('limit=1')).to.deep.equal([ownerRuns.typed]);
      expect(await ids('limit=1&offset=1')).to.deep.equal([ownerRuns.failed]);
      expect(await ids('offset=2')).to.deep.equal([ownerRuns.completed]);
      expect(await ids('offset=3')).to.deep.equal([]);
      for (const bad of ['limit=0', 'limit=abc', 'offset=-1', 'unknown=1']) {
        const result = await as.get(`/api/runs?${bad}`);
        expect(result.status, bad).to.be.within(400, 422);
      }
    });

    it('GET /api/runs/{id}: the owner and iam:admin read it; another user, an unknown id and a non-uuid get 404', async () => {
      const mine = await client(service.url, owner.token).get(`/api/runs/${ownerRuns.failed}`);
      expect(mine.status).to.equal(200);
      expect(mine.body).to.deep.include({ id: ownerRuns.failed, workflow: 'route', status: 'failed', input: { want: 'sideways' } });
      expect(mine.body.error.message).to.match(/not routed/);
      expect((await client(service.url, admin).get(`/api/runs/${ownerRuns.failed}`)).status).to.equal(200);
      expect((await client(service.url, peer.token).get(`/api/runs/${ownerRuns.failed}`)).status).to.equal(404);
      expect((await client(service.url, owner.token).get(`/api/runs/${peerRun}`)).status).to.equal(404);
      expect((await client(service.url, owner.token).get(`/api/runs/${ABSENT_ID}`)).status).to.equal(404);
      expect((await client(service.url, owner.token).get('/api/runs/not-a-uuid')).status).to.equal(404);
      expectUnauthenticated(await call(service.url, 'GET', `/api/runs/${ownerRuns.failed}`));
    });
  });

  describe('GET /api/runs/{id}/events', () => {
    let full: any[];

    before(async () => {
      full = await journalOf(service.url, owner.token, ownerRuns.completed);
    });

    it('sends every journal event as id: <seq>, event: <type>, data: {run_id, seq, ts, type, agent_id, engine, payload}, and ends after the terminal event', async () => {
      const reader = await SseReader.open(`${service.url}/api/runs/${ownerRuns.completed}/events`, { token: owner.token });
      expect(reader.status).to.equal(200);
      expect(reader.headers.get('content-type')).to.match(/^text\/event-stream/);
      const frames = await reader.readToEnd();
      expect(reader.isEnded).to.equal(true);
      expect(frames.length).to.be.at.least(5);
      frames.forEach((frame, index) => {
        expect(frame.id).to.equal(String(index + 1));
        expect(frame.event).to.equal(frame.data.type);
        expect(frame.data).to.have.all.keys('run_id', 'seq', 'ts', 'type', 'agent_id', 'engine', 'payload');
        expect(frame.data).to.include({ run_id: ownerRuns.completed, seq: index + 1 });
        expect(new Date(frame.data.ts).toString()).to.not.equal('Invalid Date');
      });
      expect(frames.map((f) => `${f.event}:${f.data.agent_id}:${f.data.engine}`)).to.deep.equal([
        'run_started:run:Workflow',
        'step_started:pick:Functional',
        'step_completed:pick:Functional',
        'step_started:jumped:Functional',
        'step_completed:jumped:Functional',
        'run_completed:run:Workflow',
      ]);
      expect(frames.map((f) => f.data)).to.deep.equal(full);
    });

    it('resumes with Last-Event-ID and with from_seq from every seq: exactly the remaining events', async () => {
      const n = full.length;
      for (let after = 0; after <= n; after++) {
        const expected = full.slice(after).map((e) => e.seq);
        const byHeader = await SseReader.open(`${service.url}/api/runs/${ownerRuns.completed}/events`, {
          token: owner.token,
          headers: { 'last-event-id': String(after) },
        });
        expect(
          (await byHeader.readToEnd(3000)).map((f) => f.data.seq),
          `Last-Event-ID ${after}`,
        ).to.deep.equal(expected);
        const byQuery = await SseReader.open(`${service.url}/api/runs/${ownerRuns.completed}/events?from_seq=${after}`, { token: owner.token });
        expect(
          (await byQuery.readToEnd(3000)).map((f) => f.data.seq),
          `from_seq ${after}`,
        ).to.deep.equal(expected);
      }
    });

    it('a client that drops mid-run and comes back with Last-Event-ID gets the rest, live, with no gap or duplicate', async () => {
      const runId = await runAs(owner.token, '/api/wf/slow?wait=false', { ms: 200 });
      const first = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token: owner.token });
      await first.until('step_completed', 5000);
      first.close();
      const lastSeen = Number(first.frames.at(-1)!.id);
      const second = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token: owner.token, headers: { 'last-event-id': String(lastSeen) } });
      const rest = await second.readToEnd(10_000);
      const seqs = [...first.frames, ...rest].map((f) => f.data.seq);
      expect(rest[0]!.data.seq).to.equal(lastSeen + 1);
      expect(seqs).to.deep.equal(seqs.map((_, i) => i + 1));
      expect(rest.at(-1)!.event).to.equal('run_completed');
      expect(
        rest.some((f) => f.event === 'step_completed'),
        'some of the rest arrived live',
      ).to.equal(true);
    });

    it('replays, then goes live for a run in progress, without gaps or duplicates', async () => {
      const runId = await runAs(owner.token, '/api/wf/slow?wait=false', { ms: 150 });
      const reader = await SseReader.open(`${service.url}/api/runs/${runId}/events`, { token: owner.token });
      const first = await reader.next();
      expect(first!.data.type).to.equal('run_started');
      expect((await client(service.url, owner.token).get(`/api/runs/${runId}`)).body.status).to.be.oneOf(['queued', 'running']);
      const frames = await reader.readToEnd();
      expect(frames.map((f) => f.data.seq)).to.deep.equal(frames.map((_f, i) => i + 1));
      expect(frames.at(-1)!.event).to.equal('run_completed');
      expect(frames.filter((f) => f.event === 'step_completed')).to.have.length(5);
      expect(frames.map((f) => f.data)).to.deep.equal(await journalOf(service.url, owner.token, runId));
    });

    it('?follow=false ends after the replay, even while the run goes on', async () => {
      const runId = await runAs(owner.token, '/api/wf/slow?wait=false', { ms: 200 });
      const reader = await SseReader.open(`${service.url}/api/runs/${runId}/events?follow=false`, { token: owner.token });
      const frames = await reader.readToEnd(2000);
      expect(reader.isEnded).to.equal(true);
      expect(frames[0]!.event).to.equal('run_started');
      expect(frames.map((f) => f.event)).to.not.include('run_completed');
      await waitForStatus(service.url, owner.token, runId, ['completed']);
      const later = await journalOf(service.url, owner.token, runId);
      expect(later.length).to.be.greaterThan(frames.length);
      expect(later.slice(0, frames.length)).to.deep.equal(frames.map((f) => f.data));
    });

    it('refuses a Last-Event-ID or from_seq of -1, abc or 1.5 with 400', async () => {
      for (const value of ['-1', 'abc', '1.5']) {
        const byHeader = await call(service.url, 'GET', `/api/runs/${ownerRuns.completed}/events`, { token: owner.token, headers: { 'last-event-id': value } });
        expect(byHeader.status, `Last-Event-ID ${value}`).to.equal(400);
        const byQuery = await call(service.url, 'GET', `/api/runs/${ownerRuns.completed}/events?from_seq=${value}`, { token: owner.token });
        expect(byQuery.status, `from_seq ${value}`).to.equal(400);
      }
    });

    it('needs runs:read (or iam:admin) and the right to read the run', async () => {
      const path = `/api/runs/${ownerRuns.completed}/events?follow=false`;
      expectUnauthenticated(await call(service.url, 'GET', path));
      expect((await call(service.url, 'GET', path, { token: operator.token })).status).to.equal(403);
      expect((await call(service.url, 'GET', path, { token: peer.token })).status).to.equal(404);
      expect((await call(service.url, 'GET', `/api/runs/not-a-uuid/events`, { token: owner.token })).status).to.equal(404);
      const asAdmin = await SseReader.open(`${service.url}${path}`, { token: admin });
      expect(asAdmin.status).to.equal(200);
      expect(await asAdmin.readToEnd()).to.have.length(full.length);
    });

    it('carries no engine-owned keys', async () => {
      for (const runId of Object.values(ownerRuns)) expectNoPrivateKeys(await journalOf(service.url, owner.token, runId), `journal of ${runId}`);
    });
  });

  describe('run control', () => {
    const control = (token: string, runId: string, action: string, body?: unknown) =>
      call(service.url, 'POST', `/api/runs/${runId}/${action}`, { token, ...(body !== undefined ? { json: body } : {}) });
    const typesOf = async (runId: string) => (await journalOf(service.url, admin, runId)).map((e) => `${e.type}:${e.agent_id}`);

    it('needs runs:control', async () => {
      const runId = await runAs(owner.token, '/api/wf/slow?wait=false', { ms: 100 });
      for (const action of ['pause', 'resume', 'abort', 'steer']) {
        expect((await control(owner.token, runId, action, action === 'steer' ? { message: 'x' } : undefined)).status, action).to.equal(403);
        expectUnauthenticated(await control('', runId, action));
      }
      await waitForStatus(service.url, admin, runId, ['completed']);
    });

    it('pause stops the run before its next step; resume continues it to completion', async () => {
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 300 });
      await waitForEvent(service.url, admin, runId, 'step_completed');
      const paused = await control(operator.token, runId, 'pause');
      expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
      expect(paused.body.id).to.equal(runId);
      await waitForStatus(service.url, admin, runId, ['paused']);
      await sleep(800);
      const held = await journalOf(service.url, admin, runId);
      const heldTypes = held.map((e) => `${e.type}:${e.agent_id}`);
      const pausedAt = heldTypes.indexOf('paused:run');
      expect(pausedAt, heldTypes.join(',')).to.be.greaterThan(0);
      // The step in flight when the pause came is journaled before `paused`; nothing follows it.
      expect(heldTypes.slice(pausedAt + 1), heldTypes.join(',')).to.deep.equal([]);
      expect(heldTypes.slice(pausedAt - 1, pausedAt), heldTypes.join(',')).to.satisfy((before: string[]) => before[0]!.startsWith('step_completed:'));
      const pauseTime = Date.parse(held[pausedAt].ts);
      const began = held
        .filter((e) => e.type === 'step_completed')
        .reduce((all, e) => ({ ...all, ...e.payload.changes.set.began }), {} as Record<string, number>);
      for (const [step, at] of Object.entries(began)) expect(at, `step ${step} began after the pause`).to.be.lessThan(pauseTime);
      const completedBefore = heldTypes.filter((t) => t.startsWith('step_completed')).length;
      expect(completedBefore).to.be.within(1, 4);
      expect((await client(service.url, admin).get(`/api/runs/${runId}`)).body.status).to.equal('paused');
      expect((await control(operator.token, runId, 'pause')).status).to.equal(200);

      const resumed = await control(operator.token, runId, 'resume');
      expect(resumed.status, JSON.stringify(resumed.body)).to.equal(200);
      const done = await waitForStatus(service.url, admin, runId, ['completed', 'failed']);
      expect(done.status).to.equal('completed');
      expect(done.output).to.include({ ms: 300, ticks: 5 });
      for (const [step, at] of Object.entries(done.output.began as Record<string, number>)) {
        if (Number(step.slice(1)) > completedBefore) expect(at, step).to.be.greaterThan(pauseTime);
      }
      const all = await typesOf(runId);
      expect(all.filter((t) => t.startsWith('step_completed'))).to.have.length(5);
      expect(all.indexOf('resumed:run')).to.be.greaterThan(all.indexOf('paused:run'));
      const firstAfterResume = all.slice(all.indexOf('resumed:run') + 1).find((t) => t.startsWith('step_started'));
      expect(firstAfterResume).to.equal(`step_started:s${completedBefore + 1}`);
    });

    it('a pause asked for while a step runs: the run stays unpaused with pause_requested until that step is journaled, then paused with nothing after it', async () => {
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 3000 });
      const asked = await control(operator.token, runId, 'pause');
      expect(asked.status, JSON.stringify(asked.body)).to.equal(200);
      // s1 is running: it has no outcome yet, so the run cannot report paused.
      expect(asked.body.status, JSON.stringify(asked.body)).to.not.equal('paused');
      expect(asked.body.pause_requested).to.equal(true);
      const meanwhile = (await client(service.url, admin).get(`/api/runs/${runId}`)).body;
      expect(meanwhile.status).to.not.equal('paused');
      expect(meanwhile.pause_requested).to.equal(true);
      expect((await control(operator.token, runId, 'pause')).body.pause_requested, 'a second pause changes nothing').to.equal(true);

      const paused = await waitForStatus(service.url, admin, runId, ['paused'], 20_000);
      expect(paused.pause_requested).to.equal(false);
      await sleep(500);
      const types = await typesOf(runId);
      expect(types, types.join(',')).to.deep.equal(['run_started:run', 'pause_requested:run', 'step_started:s1', 'step_completed:s1', 'paused:run']);

      expect((await control(operator.token, runId, 'resume')).status).to.equal(200);
      const done = await waitForStatus(service.url, admin, runId, ['completed', 'failed'], 30_000);
      expect(done.status).to.equal('completed');
      expect((await typesOf(runId)).filter((t) => t.startsWith('step_completed'))).to.have.length(5);
    });

    it('a resume withdraws a pause that has not taken effect yet; the run goes on without pausing', async () => {
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 1500 });
      expect((await control(operator.token, runId, 'pause')).body.pause_requested).to.equal(true);
      const resumed = await control(operator.token, runId, 'resume');
      expect(resumed.status, JSON.stringify(resumed.body)).to.equal(200);
      expect(resumed.body.pause_requested).to.equal(false);
      expect((await waitForStatus(service.url, admin, runId, ['completed', 'failed', 'paused'], 30_000)).status).to.equal('completed');
      const types = await typesOf(runId);
      expect(types).to.include.members(['pause_requested:run', 'resumed:run']);
      expect(types).to.not.include('paused:run');
    });

    it('a pause that commits between two steps stops the run before the next one starts', async () => {
      // Deterministic: the pause is appended after s1's outcome commits and before the executor
      // goes on, where no append of its own could conflict and bring the pause in.
      const store = service.kernel.store;
      const transact = store.transact.bind(store);
      let pausedAfterS1: Promise<unknown> | undefined;
      store.transact = (async (work: Parameters<typeof transact>[0]) => {
        const result = await transact(work);
        // A journal commit answers each run's events (several runs may share it).
        const events = Array.isArray(result) ? (result.flat() as { streamId: string; type: string; data: { agent_id?: string } }[]) : [];
        const s1 = events.find((e) => e.type === 'step_completed' && e.data.agent_id === 's1');
        if (s1 && !pausedAfterS1) {
          pausedAfterS1 = control(operator.token, s1.streamId.slice('run-'.length), 'pause');
          expect(((await pausedAfterS1) as { status: number }).status).to.equal(200);
        }
        return result;
      }) as typeof store.transact;
      let runId: string;
      try {
        runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 50 });
        await waitForStatus(service.url, admin, runId, ['paused', 'completed']);
      } finally {
        store.transact = transact;
      }
      expect(pausedAfterS1, 'the pause was sent').to.not.equal(undefined);
      await sleep(300);
      const types = (await journalOf(service.url, admin, runId)).map((e) => `${e.type}:${e.agent_id}`);
      expect(types.slice(types.indexOf('step_completed:s1')), types.join(',')).to.deep.equal(['step_completed:s1', 'pause_requested:run', 'paused:run']);
      expect((await control(operator.token, runId, 'resume')).status).to.equal(200);
      expect((await waitForStatus(service.url, admin, runId, ['completed', 'failed'])).status).to.equal('completed');
    });

    it('abort ends the run as aborted and no step runs afterwards', async () => {
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 300 });
      await waitForStatus(service.url, admin, runId, ['running']);
      const aborted = await control(operator.token, runId, 'abort', { reason: 'enough' });
      expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);
      expect(aborted.body.status).to.equal('aborted');
      await sleep(700);
      expect((await client(service.url, admin).get(`/api/runs/${runId}`)).body.status).to.equal('aborted');
      const types = await typesOf(runId);
      expect(types.at(-1)).to.equal('run_aborted:run');
      expect(types.filter((t) => t.startsWith('step_completed')).length).to.be.lessThan(2);
    });

    it('steer needs a message (422) and appends steered', async () => {
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 200 });
      expect((await control(operator.token, runId, 'steer')).status).to.equal(422);
      expect((await control(operator.token, runId, 'steer', {})).status).to.equal(422);
      expect((await control(operator.token, runId, 'steer', { message: '' })).status).to.equal(422);
      const steered = await control(operator.token, runId, 'steer', { message: 'go left' });
      expect(steered.status, JSON.stringify(steered.body)).to.equal(200);
      await waitForStatus(service.url, admin, runId, ['completed']);
      const journal = await journalOf(service.url, admin, runId);
      const event = journal.find((e) => e.type === 'steered');
      expect(event.payload).to.deep.equal({ by: operator.id, message: 'go left' });
    });

    it('answers 409 for control of a finished run, 409 for resume of a run that is not paused, 404 for an unknown run or one of another user', async () => {
      const finished = await runAs(operator.token, '/api/wf/route', { want: 'jump' });
      for (const action of ['pause', 'resume', 'abort', 'steer']) {
        const result = await control(operator.token, finished, action, action === 'steer' ? { message: 'late' } : undefined);
        expect(result.status, action).to.equal(409);
        expect(
          (await control(operator.token, ownerRuns.completed, action, action === 'steer' ? { message: 'late' } : undefined)).status,
          `${action} of another user's run`,
        ).to.equal(404);
      }
      const before = await journalOf(service.url, admin, finished);
      expect(before.at(-1).type).to.equal('run_completed');
      const runId = await runAs(operator.token, '/api/wf/slow?wait=false', { ms: 100 });
      expect((await control(operator.token, runId, 'resume')).status).to.equal(409);
      await waitForStatus(service.url, admin, runId, ['completed']);
      expect((await control(operator.token, ABSENT_ID, 'pause')).status).to.equal(404);
    });
  });
});
