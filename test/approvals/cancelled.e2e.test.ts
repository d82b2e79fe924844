// Aborting a run that waits on an approval cancels the approval, in the read model and to deciders.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, type Admin } from '../support/http.js';
import { journalOf } from '../support/runs.js';
import type { SignedInUser } from '../support/users.js';
import { requestRefund, startApprovalService } from './helpers.js';

describe('approvals: a run aborted while it waits', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;
  let fin: SignedInUser;

  before(async function () {
    this.timeout(60_000);
    ({ service, admin, fin } = await startApprovalService());
  });
  after(async () => {
    await service?.close();
  });

  it('cancels its approval: the row says cancelled, the list leaves it out, a decision is a 409', async () => {
    const run = await requestRefund(service.url, admin.token, 'C1', 700);
    const approvalId = run.approval.approval_id as string;
    const aborted = await call(service.url, 'POST', `/api/runs/${run.id}/abort`, { token: admin.token, json: { reason: 'order withdrawn' } });
    expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);

    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.at(-1)).to.deep.include({ type: 'run_aborted' });
    expect(journal.at(-1).payload).to.deep.include({ approval_id: approvalId, reason: 'order withdrawn' });
    const { rows } = await service.kernel.pool.query<{ status: string }>('SELECT status FROM svc_approvals WHERE approval_id = $1', [approvalId]);
    expect(rows.map((r) => r.status)).to.deep.equal(['cancelled']);
    const listed = await call(service.url, 'GET', '/api/approvals', { token: fin.token });
    expect((listed.body as { approval_id: string }[]).map((a) => a.approval_id)).to.not.include(approvalId);
    const late = await call(service.url, 'POST', `/api/approvals/${approvalId}`, {
      token: fin.token,
      json: { decision: 'approve', values: { refunded: 700 } },
    });
    expect(late.status, JSON.stringify(late.body)).to.equal(409);
  });
});
