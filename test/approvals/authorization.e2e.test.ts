// Who sees and decides an approval: approvals:decide, the step's required_group, never the requester when a group is required.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { requestRefund, startApprovalService } from './helpers.js';

describe('approvals: who may see and decide', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;
  /** In the group `finance`, with approvals:decide. */
  let fin: SignedInUser;
  /** approvals:decide but not in `finance`. */
  let decider: SignedInUser;
  /** May request refunds, may not decide anything. */
  let clerk: SignedInUser;

  const list = (token: string) => call(service.url, 'GET', '/api/approvals', { token });
  const listedIds = async (token: string): Promise<string[]> => {
    const result = await list(token);
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    return (result.body as { approval_id: string }[]).map((a) => a.approval_id);
  };
  const decide = (token: string, approvalId: string, body: unknown) => call(service.url, 'POST', `/api/approvals/${approvalId}`, { token, json: body });

  before(async function () {
    this.timeout(60_000);
    ({ service, admin, fin } = await startApprovalService());
    decider = await createUser(service.url, admin.token, 'decider@example.com', { deciders: ['approvals:decide', 'refunds:request'] });
    clerk = await createUser(service.url, admin.token, 'clerk@example.com', { clerks: ['refunds:request'] });
  });
  after(async () => {
    await service?.close();
  });

  it('without approvals:decide the list and a decision are 403', async () => {
    const run = await requestRefund(service.url, clerk.token, 'C1');
    const listed = await list(clerk.token);
    expect(listed.status, JSON.stringify(listed.body)).to.equal(403);
    expect(listed.body.code).to.equal('PERMISSION_DENIED');
    const decided = await decide(clerk.token, run.approval.approval_id, { decision: 'approve', values: { refunded: 1 } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(403);
    const byStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: clerk.token, json: { decision: 'reject' } });
    expect(byStep.status, JSON.stringify(byStep.body)).to.equal(403);
    const unauthenticated = await call(service.url, 'GET', '/api/approvals');
    expect(unauthenticated.status).to.equal(401);
    // Still pending: a finance member sees it.
    expect(await listedIds(fin.token)).to.include(run.approval.approval_id);
  });

  it('a member of required_group sees the approval with its details; a decider outside the group neither sees nor decides it', async () => {
    const run = await requestRefund(service.url, admin.token, 'G1', 321);
    const approvalId = run.approval.approval_id as string;

    const seen = (await list(fin.token)).body as any[];
    const mine = seen.find((a) => a.approval_id === approvalId);
    expect(mine, JSON.stringify(seen)).to.not.equal(undefined);
    expect(mine).to.deep.include({
      run_id: run.id,
      step_id: 'review',
      kind: 'human',
      workflow: 'refund',
      title: 'Approve a refund',
      instruction: 'Check the order before refunding more than 100.',
      display: { order_id: 'G1', amount: 321, reason: 'broken' },
      required_group: 'finance',
      status: 'pending',
      decision: null,
      decided_by: null,
      decide_url: `/api/approvals/${approvalId}`,
    });

    expect(await listedIds(decider.token)).to.not.include(approvalId);
    const refused = await decide(decider.token, approvalId, { decision: 'approve', values: { refunded: 321 } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    expect(refused.body.code).to.equal('PERMISSION_DENIED');
    const refusedByStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: decider.token, json: { decision: 'reject' } });
    expect(refusedByStep.status, JSON.stringify(refusedByStep.body)).to.equal(403);

    // The refusals changed nothing; the member's decision goes through.
    expect((await call(service.url, 'GET', `/api/runs/${run.id}`, { token: admin.token })).body.status).to.equal('waiting_human');
    const decided = await decide(fin.token, approvalId, { decision: 'approve', values: { refunded: 300 } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect(decided.body).to.include({ status: 'decided', decision: 'approve', decided_by: fin.id });
    expect(await listedIds(fin.token)).to.not.include(approvalId);
  });

  it('the requester never sees nor decides an approval that requires a group, even as iam:admin', async () => {
    const run = await requestRefund(service.url, admin.token, 'R1');
    const approvalId = run.approval.approval_id as string;
    expect(await listedIds(admin.token)).to.not.include(approvalId);
    const refused = await decide(admin.token, approvalId, { decision: 'approve', values: { refunded: 500 } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
    expect(refused.body.code).to.equal('PERMISSION_DENIED');
    const refusedByStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: admin.token, json: { decision: 'reject' } });
    expect(refusedByStep.status, JSON.stringify(refusedByStep.body)).to.equal(403);
    expect(await listedIds(fin.token)).to.include(approvalId);
  });

  it('a group member who requested it may not decide it either; iam:admin (not the requester) may', async () => {
    const run = await requestRefund(service.url, fin.token, 'R2', 800);
    const approvalId = run.approval.approval_id as string;
    expect(await listedIds(fin.token)).to.not.include(approvalId);
    const refused = await decide(fin.token, approvalId, { decision: 'approve', values: { refunded: 800 } });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(403);

    expect(await listedIds(admin.token)).to.include(approvalId);
    const decided = await decide(admin.token, approvalId, { decision: 'approve', values: { refunded: 750 } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect(decided.body).to.include({ decided_by: admin.userId });
    const done = await waitForStatus(service.url, fin.token, run.id, ['completed']);
    expect(done.output).to.include({ order_id: 'R2', refunded: 750, approved_by: admin.userId });
  });

  it('without required_group any approvals:decide holder sees and may decide it, the requester included', async () => {
    const first = await call(service.url, 'POST', '/api/leave', { token: decider.token, json: { days: 3 } });
    expect(first.status, JSON.stringify(first.body)).to.equal(202);
    const second = await call(service.url, 'POST', '/api/leave', { token: decider.token, json: { days: 5 } });
    expect(second.status, JSON.stringify(second.body)).to.equal(202);
    const firstId = first.body.approval.approval_id as string;
    const secondId = second.body.approval.approval_id as string;

    for (const token of [decider.token, fin.token, admin.token]) expect(await listedIds(token)).to.include.members([firstId, secondId]);
    const row = ((await list(decider.token)).body as any[]).find((a) => a.approval_id === firstId);
    expect(row).to.include({ required_group: null, title: 'Approve leave', workflow: 'leave' });
    expect(row.display).to.deep.equal({ days: 3 });
    const clerkList = await list(clerk.token);
    expect(clerkList.status).to.equal(403);

    // The requester decides their own request.
    const own = await decide(decider.token, firstId, { decision: 'approve', values: { granted_days: 3 } });
    expect(own.status, JSON.stringify(own.body)).to.equal(200);
    const done = await waitForStatus(service.url, decider.token, first.body.id, ['completed']);
    expect(done.output).to.deep.equal({ decision: 'approve', values: { granted_days: 3 }, comment: null, decided_by: decider.id });

    // Another holder of approvals:decide, by step.
    const other = await call(service.url, 'POST', `/api/runs/${second.body.id}/human/ask`, {
      token: fin.token,
      json: { decision: 'reject', comment: 'too long' },
    });
    expect(other.status, JSON.stringify(other.body)).to.equal(200);
    const rejected = await waitForStatus(service.url, decider.token, second.body.id, ['completed']);
    expect(rejected.output).to.deep.equal({ decision: 'reject', values: {}, comment: 'too long', decided_by: fin.id });
    expect(await listedIds(decider.token)).to.not.include(firstId);
    expect(await listedIds(decider.token)).to.not.include(secondId);
  });
});
