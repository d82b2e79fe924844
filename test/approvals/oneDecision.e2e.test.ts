// Exactly one decision wins: concurrent decisions, a decision after the run finished, a decision after abort.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import type { SignedInUser } from '../support/users.js';
import { requestRefund, startApprovalService } from './helpers.js';

describe('approvals: exactly one decision wins', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;
  let fin: SignedInUser;

  const decide = (approvalId: string, body: unknown, token = fin.token) => call(service.url, 'POST', `/api/approvals/${approvalId}`, { token, json: body });
  const pendingIds = async (token: string): Promise<string[]> => {
    const result = await call(service.url, 'GET', '/api/approvals', { token });
    expect(result.status).to.equal(200);
    return (result.body as { approval_id: string }[]).map((a) => a.approval_id);
  };

  before(async function () {
    this.timeout(60_000);
    ({ service, admin, fin } = await startApprovalService());
  });
  after(async () => {
    await service?.close();
  });

  it("10 concurrent decisions: exactly one 200 and nine 409; one decision in the journal, the winner's", async () => {
    const run = await requestRefund(service.url, admin.token, 'X1', 1000);
    const approvalId = run.approval.approval_id as string;
    const bodies = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0 ? { decision: 'approve', values: { refunded: 100 + i }, comment: `c${i}` } : { decision: 'reject', comment: `c${i}` },
    );
    // Half by id, half by step: both routes race for the same approval.
    const results = await Promise.all(
      bodies.map((body, i) =>
        i < 5 ? decide(approvalId, body) : call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: body }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(results.map((r) => [r.status, r.body])),
    ).to.have.length(1);
    expect(
      statuses.filter((s) => s === 409),
      JSON.stringify(statuses),
    ).to.have.length(9);
    for (const loser of results.filter((r) => r.status === 409)) expect(loser.body.code).to.equal('CONFLICT');
    const winnerIndex = statuses.indexOf(200);
    const winner = bodies[winnerIndex]!;
    expect(results[winnerIndex]!.body).to.include({ decision: winner.decision, comment: winner.comment, decided_by: fin.id });

    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    if (winner.decision === 'approve')
      expect(done.output).to.deep.include({ refunded: (winner as { values: { refunded: number } }).values.refunded, comment: winner.comment });
    else expect(done.output).to.deep.include({ decision: 'reject', rejected_by: fin.id });
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'decision' && e.agent_id === 'review')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'step_completed' && e.agent_id === 'review')).to.have.length(1);
    expect(journal.filter((e) => e.type === 'run_completed')).to.have.length(1);
    expect(journal.find((e) => e.type === 'approval_decided').payload.comment).to.equal(winner.comment);
  });

  it('a second decision, and one after the run finished, is 409 (by id and by step)', async () => {
    const run = await requestRefund(service.url, admin.token, 'X2');
    const approvalId = run.approval.approval_id as string;
    expect((await decide(approvalId, { decision: 'reject' })).status).to.equal(200);
    const second = await decide(approvalId, { decision: 'approve', values: { refunded: 1 } });
    expect(second.status, JSON.stringify(second.body)).to.equal(409);
    await waitForStatus(service.url, admin.token, run.id, ['completed']);
    const afterFinish = await decide(approvalId, { decision: 'reject' });
    expect(afterFinish.status, JSON.stringify(afterFinish.body)).to.equal(409);
    expect(afterFinish.body.code).to.equal('CONFLICT');
    const byStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: { decision: 'reject' } });
    expect(byStep.status, JSON.stringify(byStep.body)).to.equal(409);
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided')).to.have.length(1);
    expect(journal.at(-1).type).to.equal('run_completed');
  });

  it('pause and resume of a waiting run keep its approval: same id, asked once, still decidable by its decide_url', async () => {
    const run = await requestRefund(service.url, admin.token, 'X4');
    const approvalId = run.approval.approval_id as string;
    const paused = await call(service.url, 'POST', `/api/runs/${run.id}/pause`, { token: admin.token });
    expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
    expect(paused.body.status).to.equal('paused');
    const resumed = await call(service.url, 'POST', `/api/runs/${run.id}/resume`, { token: admin.token });
    expect(resumed.status, JSON.stringify(resumed.body)).to.equal(200);
    await sleep(300);
    const waiting = await waitForStatus(service.url, admin.token, run.id, ['waiting_human']);
    expect(waiting.approval).to.deep.equal(run.approval);
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(
      journal.filter((e) => e.type === 'approval_requested'),
      'the approval is asked for once',
    ).to.have.length(1);
    expect(journal.filter((e) => e.type === 'step_started' && e.agent_id === 'review')).to.have.length(1);
    expect(await pendingIds(fin.token)).to.include(approvalId);

    const decided = await decide(approvalId, { decision: 'approve', values: { refunded: 42 } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.include({ order_id: 'X4', refunded: 42 });
  });

  it('a decision while the run is paused is recorded; the run continues only once resumed', async () => {
    const run = await requestRefund(service.url, admin.token, 'X5');
    expect((await call(service.url, 'POST', `/api/runs/${run.id}/pause`, { token: admin.token })).status).to.equal(200);
    const decided = await decide(run.approval.approval_id, { decision: 'reject' });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    await sleep(300);
    expect((await call(service.url, 'GET', `/api/runs/${run.id}`, { token: admin.token })).body.status).to.equal('paused');
    expect((await decide(run.approval.approval_id, { decision: 'approve', values: { refunded: 1 } })).status).to.equal(409);
    expect((await call(service.url, 'POST', `/api/runs/${run.id}/resume`, { token: admin.token })).status).to.equal(200);
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ order_id: 'X5', decision: 'reject', rejected_by: fin.id });
  });

  it('after abort (runs:control) a decision is 409, the run stays aborted and the approval is no longer listed', async () => {
    const run = await requestRefund(service.url, admin.token, 'X3');
    const approvalId = run.approval.approval_id as string;
    expect(await pendingIds(fin.token)).to.include(approvalId);
    // fin lacks runs:control.
    const refused = await call(service.url, 'POST', `/api/runs/${run.id}/abort`, { token: fin.token, json: { reason: 'no' } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    const aborted = await call(service.url, 'POST', `/api/runs/${run.id}/abort`, { token: admin.token, json: { reason: 'duplicate request' } });
    expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);
    expect(aborted.body.status).to.equal('aborted');
    expect(aborted.body.approval).to.equal(null);

    const late = await decide(approvalId, { decision: 'approve', values: { refunded: 500 } });
    expect(late.status, JSON.stringify(late.body)).to.equal(409);
    expect(late.body.code).to.equal('CONFLICT');
    const lateByStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: { decision: 'reject' } });
    expect(lateByStep.status, JSON.stringify(lateByStep.body)).to.equal(409);

    // An approval nobody can decide any more is not offered to deciders.
    expect(await pendingIds(fin.token)).to.not.include(approvalId);
    expect((await call(service.url, 'GET', `/api/runs/${run.id}`, { token: admin.token })).body.status).to.equal('aborted');
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.map((e) => e.type)).to.not.include('approval_decided');
    expect(journal.at(-1)).to.deep.include({ type: 'run_aborted' });
    // The abort names the approval it cancels.
    expect(journal.at(-1).payload).to.deep.equal({ by: admin.userId, reason: 'duplicate request', approval_id: approvalId });
  });
});
