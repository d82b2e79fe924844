// Durable time on real processes: step retries (step_attempt_failed, waiting_retry) and Wait steps
// (timer_started / timer_fired, waiting_timer), paused, aborted and steered while they wait, and a
// process killed while a run waits: another process fires the retry or the timer, once.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { journalOf as servedJournal, startRun, waitForStatus } from '../support/runs.js';
import { killAllServices, LEASE_MS, ServiceProcess } from '../support/serviceProcess.js';
import { FIXTURES, journalOf, journalProblems, openPool } from './helpers.js';

const TIMERS_PROJECT = path.join(FIXTURES, 'timers');

async function createAttemptsTable(db: pg.Pool): Promise<void> {
  await db.query(`CREATE TABLE timer_attempts (
    id bigserial PRIMARY KEY, run_id text NOT NULL, step_id text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
}

async function attemptsOf(db: pg.Pool, runId: string): Promise<{ pid: number; at: Date }[]> {
  return (await db.query<{ pid: number; at: Date }>('SELECT pid, at FROM timer_attempts WHERE run_id = $1 ORDER BY id', [runId])).rows;
}

describe('durable time: retries and timers', function () {
  this.timeout(60_000);
  let databaseUrl: string;
  let db: pg.Pool;
  let a: ServiceProcess;
  let token: string;

  before(async function () {
    this.timeout(60_000);
    databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    await createAttemptsTable(db);
    a = await ServiceProcess.start(databaseUrl, TIMERS_PROJECT);
    token = (await bootstrapAdmin(a.url)).token;
  });
  after(async () => {
    await killAllServices();
    await db.end();
  });

  const fire = (service: ServiceProcess, workflow: string, input: Record<string, unknown>) => startRun(service.url, token, workflow, input);
  const control = (service: ServiceProcess, runId: string, action: string, json?: unknown) =>
    call(service.url, 'POST', `/api/runs/${runId}/${action}`, { token, ...(json !== undefined ? { json } : {}) });
  const types = async (runId: string) => (await journalOf(db, runId)).map((e) => e.type);

  describe('retries', () => {
    it('a step that fails twice then succeeds: three attempts, two journaled failures with growing intervals, the run completes', async () => {
      const runId = await fire(a, 'retry', { fail_times: 2 });
      const done = await waitForStatus(a.url, token, runId, ['completed', 'failed'], 20_000);
      expect(done.status, JSON.stringify(done)).to.equal('completed');
      expect(done.output).to.deep.equal({ attempts: 3 });
      const journal = await journalOf(db, runId);
      expect(journalProblems(journal)).to.deep.equal([]);
      const failures = journal.filter((e) => e.type === 'step_attempt_failed');
      expect(failures.map((e) => e.payload.attempt)).to.deep.equal([1, 2]);
      for (const failure of failures) {
        expect(failure.step).to.equal('flaky');
        expect(failure.payload.error).to.deep.include({ name: 'FlakyError', message: `attempt ${String(failure.payload.attempt)} failed` });
      }
      // The journaled intervals (the policy's, no jitter): 300 ms, then 600 ms.
      const intervals = failures.map((e) => Date.parse(String(e.payload.next_attempt_at)) - e.recordedAt.getTime());
      expect(intervals[0]).to.be.within(250, 300);
      expect(intervals[1]).to.be.within(550, 600);
      const attempts = await attemptsOf(db, runId);
      expect(attempts).to.have.length(3);
      // No attempt ran before its journaled time (a few ms of clock granularity aside).
      failures.forEach((failure, i) => expect(attempts[i + 1]!.at.getTime()).to.be.at.least(Date.parse(String(failure.payload.next_attempt_at)) - 5));
      const served = await servedJournal(a.url, token, runId);
      expect(served.filter((e) => e.type === 'step_attempt_failed')).to.have.length(2);
    });

    it('a non-retryable error fails at once and takes the error route', async () => {
      const runId = await fire(a, 'retry', { fail_times: 5, error_name: 'ValidationError' });
      const done = await waitForStatus(a.url, token, runId, ['completed', 'failed'], 20_000);
      expect(done.output).to.deep.equal({ error: 'attempt 1 failed' });
      expect(await types(runId)).to.not.include('step_attempt_failed');
      expect(await attemptsOf(db, runId)).to.have.length(1);
    });

    it('exhausted attempts take the error route with the last error', async () => {
      const runId = await fire(a, 'retry', { fail_times: 10 });
      const done = await waitForStatus(a.url, token, runId, ['completed', 'failed'], 20_000);
      expect(done.output).to.deep.equal({ error: 'attempt 4 failed' });
      const journal = await journalOf(db, runId);
      expect(journal.filter((e) => e.type === 'step_attempt_failed').map((e) => e.payload.attempt)).to.deep.equal([1, 2, 3]);
      expect(journal.filter((e) => e.type === 'step_failed' && e.step === 'flaky')).to.have.length(1);
      expect(await attemptsOf(db, runId)).to.have.length(4);
    });

    it('pause during waiting_retry holds the retry until resume; abort during waiting_retry ends the run', async () => {
      const paused = await fire(a, 'slowretry', { fail_times: 1 });
      await waitForStatus(a.url, token, paused, ['waiting_retry']);
      expect((await control(a, paused, 'pause')).status).to.equal(200);
      await waitForStatus(a.url, token, paused, ['paused']);
      const { rows } = await db.query('SELECT wake_at FROM svc_runs WHERE id = $1', [paused]);
      await sleep(Math.max(0, (rows[0].wake_at as Date).getTime() - Date.now()) + 800);
      expect(await attemptsOf(db, paused), 'no attempt while paused, even past its time').to.have.length(1);
      expect((await control(a, paused, 'resume')).status).to.equal(200);
      const done = await waitForStatus(a.url, token, paused, ['completed'], 20_000);
      expect(done.output).to.deep.equal({ attempts: 2 });

      const aborted = await fire(a, 'slowretry', { fail_times: 1 });
      await waitForStatus(a.url, token, aborted, ['waiting_retry']);
      expect((await control(a, aborted, 'abort')).status).to.equal(200);
      await waitForStatus(a.url, token, aborted, ['aborted']);
      await sleep(3500);
      expect(await attemptsOf(db, aborted), 'an aborted run is never retried').to.have.length(1);
      expect((await types(aborted)).at(-1)).to.equal('run_aborted');
    });
  });

  describe('Wait', () => {
    it('waits until its date (timer_started, waiting_timer, timer_fired) and goes on', async () => {
      const deadline = new Date(Date.now() + 1500).toISOString();
      const runId = await fire(a, 'wait', { deadline });
      const waiting = await waitForStatus(a.url, token, runId, ['waiting_timer', 'completed']);
      expect(waiting.status).to.equal('waiting_timer');
      const done = await waitForStatus(a.url, token, runId, ['completed', 'failed'], 20_000);
      expect(done.output).to.deep.equal({ deadline });
      const journal = await journalOf(db, runId);
      const started = journal.find((e) => e.type === 'timer_started')!;
      const fired = journal.find((e) => e.type === 'timer_fired')!;
      expect(started.payload.fires_at).to.equal(deadline);
      expect(fired.recordedAt.getTime()).to.be.at.least(Date.parse(deadline) - 5);
      const ofHold = journal.filter((e) => e.step === 'hold').map((e) => e.type);
      expect(ofHold).to.deep.equal(['step_started', 'timer_started', 'timer_fired', 'step_completed']);
    });

    it('a past until fires at once; a bad date takes the error route', async () => {
      const past = await call(a.url, 'POST', '/api/workflows/wait/runs', { token, json: { deadline: '2001-01-01T00:00:00Z' } });
      expect(past.status, JSON.stringify(past.body)).to.equal(201);
      expect(past.body).to.deep.equal({ deadline: '2001-01-01T00:00:00Z' });
      const bad = await call(a.url, 'POST', '/api/workflows/wait/runs', { token, json: { deadline: 'next week' } });
      expect(bad.status, JSON.stringify(bad.body)).to.equal(400);
      expect(bad.body.error).to.match(/not an ISO 8601 date-time/);
    });

    it('pause, steer and resume while waiting keep the timer; abort ends it', async () => {
      const runId = await fire(a, 'wait', { deadline: new Date(Date.now() + 2500).toISOString() });
      await waitForStatus(a.url, token, runId, ['waiting_timer']);
      expect((await control(a, runId, 'steer', { message: 'note' })).status).to.equal(200);
      expect((await control(a, runId, 'pause')).status).to.equal(200);
      await waitForStatus(a.url, token, runId, ['paused']);
      await sleep(3000);
      expect(await types(runId), 'the timer does not fire while paused').to.not.include('timer_fired');
      expect((await control(a, runId, 'resume')).status).to.equal(200);
      // Its time has passed: it fires at the next claim.
      await waitForStatus(a.url, token, runId, ['completed'], 20_000);

      const aborted = await fire(a, 'wait', { deadline: new Date(Date.now() + 60_000).toISOString() });
      await waitForStatus(a.url, token, aborted, ['waiting_timer']);
      expect((await control(a, aborted, 'abort')).status).to.equal(200);
      const ended = await waitForStatus(a.url, token, aborted, ['aborted']);
      expect(ended.status).to.equal('aborted');
      const { rows } = await db.query('SELECT wake_at FROM svc_runs WHERE id = $1', [aborted]);
      expect(rows[0].wake_at).to.equal(null);
    });
  });

  describe('a process killed while runs wait', () => {
    it('a second process fires the retries and timers the first left, each once', async () => {
      const retrying = await fire(a, 'slowretry', { fail_times: 1 });
      const napping = await fire(a, 'nap', {});
      await waitForStatus(a.url, token, retrying, ['waiting_retry']);
      await waitForStatus(a.url, token, napping, ['waiting_timer']);
      await a.kill('SIGKILL');
      const b = await ServiceProcess.start(databaseUrl, TIMERS_PROJECT);
      await waitForStatus(b.url, token, retrying, ['completed'], 20_000);
      await waitForStatus(b.url, token, napping, ['completed'], 20_000);
      const retries = await attemptsOf(db, retrying);
      expect(retries.map((x) => x.pid)).to.deep.equal([a.pid, b.pid]);
      expect(await attemptsOf(db, napping)).to.have.length(1);
      for (const runId of [retrying, napping]) expect(journalProblems(await journalOf(db, runId)), runId).to.deep.equal([]);
      expect((await types(napping)).filter((t) => t === 'timer_fired')).to.have.length(1);
      await b.kill();
    });

    it('a process that dies holding a near wake in memory loses nothing: another fires it after the lease', async () => {
      // A holds waits up to its claim interval (5 s) in process: the 2 s nap is held there when A dies.
      const holder = await ServiceProcess.start(databaseUrl, TIMERS_PROJECT, { SVC_RUN_CLAIM_INTERVAL_MS: '5000' });
      const runId = await fire(holder, 'nap', {});
      await waitForStatus(holder.url, token, runId, ['waiting_timer']);
      const { rows } = await db.query('SELECT owner FROM svc_run_leases WHERE run_id = $1', [runId]);
      expect(rows, 'the holding process keeps the lease while it holds the wait').to.have.length(1);
      await holder.kill('SIGKILL');
      const b = await ServiceProcess.start(databaseUrl, TIMERS_PROJECT);
      await waitForStatus(b.url, token, runId, ['completed'], 5 * LEASE_MS + 20_000);
      const journal = await journalOf(db, runId);
      expect(journalProblems(journal)).to.deep.equal([]);
      expect(journal.filter((e) => e.type === 'timer_fired')).to.have.length(1);
      const after = await attemptsOf(db, runId);
      expect(after).to.have.length(1);
      expect(after[0]!.pid, 'the step after the timer ran on a live process').to.not.equal(holder.pid);
    });
  });
});
