// Two processes on one database: a run that waits on process A is decided on process B and completes, also after A died.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { ServiceProcess } from '../support/serviceProcess.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { FINANCE_ROLES, HITL_PROJECT, requestRefund, SIGNING_KEY } from './helpers.js';

describe('approvals across processes', function () {
  this.timeout(40_000);
  let databaseUrl: string;
  /** `svc serve` in a child process. */
  let processA: ServiceProcess | undefined;
  /** The in-process service on the same database. */
  let serviceB: Service;
  let admin: Admin;
  let fin: SignedInUser;

  before(async function () {
    this.timeout(90_000);
    databaseUrl = await createTestDatabase();
    processA = await ServiceProcess.start(databaseUrl, HITL_PROJECT, { SVC_SIGNING_KEY: SIGNING_KEY });
    serviceB = await startTestService({ databaseUrl, projectDir: HITL_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_RUN_CLAIM_INTERVAL_MS: '200' } });
    admin = await bootstrapAdmin(processA.url);
    fin = await createUser(processA.url, admin.token, 'fin@example.com', FINANCE_ROLES);
  });
  after(async () => {
    await processA?.kill();
    await serviceB?.close();
  });

  it('started on A, listed and decided on B: the run completes and both processes read the same outcome', async () => {
    const run = await requestRefund(processA!.url, admin.token, 'P1', 640);
    const listed = await call(serviceB.url, 'GET', '/api/approvals', { token: fin.token });
    expect(listed.status).to.equal(200);
    expect((listed.body as any[]).map((a) => a.approval_id)).to.include(run.approval.approval_id);

    const decided = await call(serviceB.url, 'POST', `/api/approvals/${run.approval.approval_id}`, {
      token: fin.token,
      json: { decision: 'approve', values: { refunded: 600 }, comment: 'from B' },
    });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const onA = await waitForStatus(processA!.url, admin.token, run.id, ['completed']);
    expect(onA.output).to.deep.equal({ order_id: 'P1', refunded: 600, channel: null, approved_by: fin.id, comment: 'from B' });
    const onB = await waitForStatus(serviceB.url, admin.token, run.id, ['completed']);
    expect(onB.output).to.deep.equal(onA.output);
    const journal = await journalOf(processA!.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'step_completed' && e.agent_id === 'approved')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'run_completed')).to.have.length(1);
  });

  it('started on B, decided on A (the child process): the same', async () => {
    const run = await requestRefund(serviceB.url, admin.token, 'P2', 150);
    const decided = await call(processA!.url, 'POST', `/api/runs/${run.id}/human/review`, {
      token: fin.token,
      json: { decision: 'reject', comment: 'from A' },
    });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const done = await waitForStatus(serviceB.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ order_id: 'P2', decision: 'reject', rejected_by: fin.id });
  });

  it('A is killed while the run waits; the decision on B resumes it and it completes', async () => {
    const run = await requestRefund(processA!.url, admin.token, 'P3', 999);
    await processA!.kill();
    expect(processA!.isRunning).to.equal(false);

    // B answers for the run A started: it waits, and B offers its approval.
    expect((await call(serviceB.url, 'GET', `/api/runs/${run.id}`, { token: admin.token })).body.status).to.equal('waiting_human');
    const decided = await call(serviceB.url, 'POST', `/api/approvals/${run.approval.approval_id}`, {
      token: fin.token,
      json: { decision: 'approve', values: { refunded: 999, channel: 'voucher' } },
    });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const done = await waitForStatus(serviceB.url, admin.token, run.id, ['completed'], 10_000);
    expect(done.output).to.deep.equal({ order_id: 'P3', refunded: 999, channel: 'voucher', approved_by: fin.id, comment: null });
    const journal = await journalOf(serviceB.url, admin.token, run.id);
    expect(journal.map((e) => e.seq)).to.deep.equal(journal.map((_, i) => i + 1));
    expect(journal.filter((e) => e.type === 'approval_requested')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'step_completed' && e.agent_id === 'size')).to.have.length(1);
    expect(journal.at(-1).type).to.equal('run_completed');
    // A second decision, now on the only live process, is still refused.
    const again = await call(serviceB.url, 'POST', `/api/approvals/${run.approval.approval_id}`, { token: fin.token, json: { decision: 'reject' } });
    expect(again.status).to.equal(409);
  });
});
