// Expiry: an undecided approval takes the `expired` route, also when no process ran at its moment; a late decision is 409.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import type { Clock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { HITL_PROJECT, SIGNING_KEY } from './helpers.js';

const ENV = { SVC_SIGNING_KEY: SIGNING_KEY, SVC_RUN_CLAIM_INTERVAL_MS: '100' };
/** Generous: an expiry that has not happened within this is not coming. */
const DEADLINE_MS = 20_000;
/** expires_in_s of the `hold` workflow. */
const HOLD_EXPIRY_MS = 30_000;

/** Triggers the `quick` workflow (expires_in_s: 1); answers the 202 descriptor. */
async function requestQuick(baseUrl: string, token: string, ticket: string): Promise<any> {
  const result = await call(baseUrl, 'POST', '/api/quick', { token, json: { ticket } });
  expect(result.status, JSON.stringify(result.body)).to.equal(202);
  expect(result.body.status).to.equal('waiting_human');
  return result.body;
}

/** The journal shows the expiry: approval_decided and decision by `system:expiry`, then the `expired` route. */
async function expectExpiredJournal(baseUrl: string, token: string, run: any): Promise<any> {
  const journal = await journalOf(baseUrl, token, run.id);
  const requested = journal.find((e) => e.type === 'approval_requested');
  const decided = journal.filter((e) => e.type === 'approval_decided');
  expect(decided).to.have.length(1);
  expect(decided[0].payload).to.deep.include({ approval_id: run.approval.approval_id, step_id: 'confirm', decision: 'expired', decided_by: 'system:expiry' });
  expect(journal.find((e) => e.type === 'decision' && e.agent_id === 'confirm').payload).to.deep.equal({ decision: 'expired', source: 'system:expiry' });
  const step = journal.find((e) => e.type === 'step_completed' && e.agent_id === 'confirm');
  expect(step.payload).to.include({ signal: 'expired', next: 'lapsed' });
  // Not before it was due.
  expect(Date.parse(decided[0].ts)).to.be.at.least(Date.parse(requested.payload.approval.expires_at));
  return decided[0];
}

describe('approvals: expiry', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: HITL_PROJECT, env: ENV });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('expires_in_s: 1 and no decision: the run takes the `expired` route within a few seconds; deciding it then is 409', async () => {
    const run = await requestQuick(service.url, admin.token, 'E1');
    const listed = await call(service.url, 'GET', '/api/approvals', { token: admin.token });
    expect((listed.body as any[]).map((a) => a.approval_id)).to.include(run.approval.approval_id);
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed', 'failed'], DEADLINE_MS);
    expect(done.status).to.equal('completed');
    expect(done.output).to.deep.equal({ ticket: 'E1', outcome: 'expired', decided_by: 'system:expiry' });
    await expectExpiredJournal(service.url, admin.token, run);

    const late = await call(service.url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: admin.token, json: { decision: 'approve' } });
    expect(late.status, JSON.stringify(late.body)).to.equal(409);
    expect(late.body.code).to.equal('CONFLICT');
    const lateByStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/confirm`, { token: admin.token, json: { decision: 'reject' } });
    expect(lateByStep.status, JSON.stringify(lateByStep.body)).to.equal(409);
    const after = await call(service.url, 'GET', '/api/approvals', { token: admin.token });
    expect((after.body as any[]).map((a) => a.approval_id)).to.not.include(run.approval.approval_id);
  });

  it('a decision before the expiry wins; the expiry then changes nothing', async () => {
    const run = await requestQuick(service.url, admin.token, 'E2');
    const decided = await call(service.url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: admin.token, json: { decision: 'approve' } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ ticket: 'E2', outcome: 'approve' });
    // An approval requested now falls due after E2's: once it has expired, a sweep ran that would have found E2.
    const later = await requestQuick(service.url, admin.token, 'E2-later');
    await waitForStatus(service.url, admin.token, later.id, ['completed'], DEADLINE_MS);
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided').map((e) => e.payload.decision)).to.deep.equal(['approve']);
    expect(journal.at(-1).type).to.equal('run_completed');
  });
});

/** The wall clock, moved on by what a test asks: approvals fall due without the test waiting for them. */
function shiftableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    advance: (ms) => {
      offset += ms;
    },
  };
}

describe('approvals: expiry past the approvals of aborted runs', function () {
  this.timeout(40_000);
  const clock = shiftableClock();
  let service: Service;
  let admin: Admin;

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: HITL_PROJECT, env: ENV, clock });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('approvals of aborted runs do not hold up the expiry of others (more than one sweep batch of them)', async () => {
    // 60 runs wait on `hold` (expires after 30 s: time enough to abort them all); all are aborted.
    const runs: any[] = [];
    for (let batch = 0; batch < 6; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(service.url, 'POST', '/api/hold', { token: admin.token, json: { n: batch * 10 + i } })),
      );
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).to.equal(202);
      runs.push(...answers.map((a) => a.body));
    }
    const aborted = await Promise.all(runs.map((run) => call(service.url, 'POST', `/api/runs/${run.id}/abort`, { token: admin.token, json: {} })));
    expect(aborted.map((a) => a.status)).to.deep.equal(runs.map(() => 200));
    // Past their expiry, ask for a new approval that is due after them.
    clock.advance(HOLD_EXPIRY_MS);
    const run = await requestQuick(service.url, admin.token, 'E3');
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed'], DEADLINE_MS);
    expect(done.output).to.deep.include({ outcome: 'expired' });
    for (const aborted of runs.slice(0, 3)) {
      expect((await call(service.url, 'GET', `/api/runs/${aborted.id}`, { token: admin.token })).body.status).to.equal('aborted');
    }
  });
});

describe('approvals: expiry even if no process was running', function () {
  this.timeout(40_000);
  let first: Service | undefined;
  let second: Service | undefined;
  let db: pg.Pool;

  after(async () => {
    await first?.close().catch(() => undefined);
    await second?.close();
    await db?.end();
  });

  it('a service restarted on the same database after the expiry completes the run via `expired`', async () => {
    const databaseUrl = await createTestDatabase();
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    first = await startTestService({ databaseUrl, projectDir: HITL_PROJECT, env: ENV });
    const admin = await bootstrapAdmin(first.url);
    const run = await requestQuick(first.url, admin.token, 'R1');
    await first.close();
    first = undefined;
    const stoppedAt = Date.now();
    // It was not due yet while the first service ran.
    const due = await db.query<{ expires_at: Date }>('SELECT expires_at FROM svc_approvals WHERE approval_id = $1', [run.approval.approval_id]);
    expect(due.rows[0]!.expires_at.getTime()).to.be.above(stoppedAt);

    // Nobody runs: the run still waits while its approval falls due.
    const waiting = async () =>
      (
        await db.query<{ status: string; expired: boolean }>(
          `SELECT r.status, a.expires_at < now() AS expired FROM svc_runs r JOIN svc_approvals a ON a.run_id = r.id WHERE r.id = $1`,
          [run.id],
        )
      ).rows;
    await eventually(async () => (await waiting())[0]?.expired === true, DEADLINE_MS);
    expect(await waiting()).to.deep.equal([{ status: 'waiting_human', expired: true }]);

    second = await startTestService({ databaseUrl, projectDir: HITL_PROJECT, env: ENV });
    const done = await waitForStatus(second.url, admin.token, run.id, ['completed', 'failed'], DEADLINE_MS);
    expect(done.status).to.equal('completed');
    expect(done.output).to.deep.equal({ ticket: 'R1', outcome: 'expired', decided_by: 'system:expiry' });
    const decided = await expectExpiredJournal(second.url, admin.token, run);
    // Expired by the new process, after the first one had stopped.
    expect(Date.parse(decided.ts)).to.be.above(stoppedAt);

    const late = await call(second.url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: admin.token, json: { decision: 'approve' } });
    expect(late.status, JSON.stringify(late.body)).to.equal(409);
  });
});

describe('approvals: a decision after expires_at, before any sweep ran', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;

  before(async function () {
    this.timeout(60_000);
    // The sweep runs once at start and then not for ten minutes: only the decision's own check can refuse.
    service = await startTestService({ projectDir: HITL_PROJECT, env: { ...ENV, SVC_RUN_CLAIM_INTERVAL_MS: '600000' } });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('is refused with 409, and the run stays waiting for the expiry to be recorded', async () => {
    const run = await requestQuick(service.url, admin.token, 'E9');
    const listed = await call(service.url, 'GET', '/api/approvals', { token: admin.token });
    const expiresAt = Date.parse((listed.body as any[]).find((a) => a.approval_id === run.approval.approval_id).expires_at);
    expect(expiresAt).to.be.a('number').and.not.NaN;
    await sleep(expiresAt - Date.now() + 50);
    const late = await call(service.url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: admin.token, json: { decision: 'approve' } });
    expect(late.status, JSON.stringify(late.body)).to.equal(409);
    expect(late.body.detail).to.match(/expired at/);
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided')).to.have.length(0);
    const current = await call(service.url, 'GET', `/api/runs/${run.id}`, { token: admin.token });
    expect(current.body.status).to.equal('waiting_human');
  });
});
