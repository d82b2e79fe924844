// Approvals across tenants: another tenant's approval, by id or by run and step, is the 404 of a run
// that has none — no approval id, no decision, no run state crosses the tenant line.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, type SignedInUser } from '../support/users.js';
import { ABSENT_ID, HITL_PROJECT, SIGNING_KEY } from './helpers.js';

const DECIDERS = { deciders: ['approvals:decide'] };

describe('approvals: one tenant never reaches another tenant’s', function () {
  this.timeout(30_000);
  let service: Service;
  let root: Admin;
  let t1Decider: SignedInUser;
  let t2Decider: SignedInUser;
  let t2Admin: SignedInUser;

  before(async () => {
    service = await startTestService({ projectDir: HITL_PROJECT, env: { SVC_TENANT_IDS: 't1,t2', SVC_SIGNING_KEY: SIGNING_KEY } });
    root = await bootstrapAdmin(service.url);
    t1Decider = await createUser(service.url, root.token, 'dee@t1.example', DECIDERS, { tenant: 't1' });
    t2Decider = await createUser(service.url, root.token, 'dan@t2.example', DECIDERS, { tenant: 't2' });
    t2Admin = await createUser(service.url, root.token, 'ada@t2.example', { t2_admins: ['iam:admin'] }, { tenant: 't2' });
  });
  after(async () => {
    await service?.close();
  });

  it('by run and step, another tenant’s waiting run answers like an unknown run: no approval id, nothing decided', async () => {
    const run = await call(service.url, 'POST', '/api/leave', { token: t1Decider.token, json: { days: 4 } });
    expect(run.status, JSON.stringify(run.body)).to.equal(202);
    const approvalId = run.body.approval.approval_id as string;
    const unknown = await call(service.url, 'POST', `/api/runs/${ABSENT_ID}/human/ask`, {
      token: t2Decider.token,
      json: { decision: 'approve', values: { granted_days: 4 } },
    });
    expect(unknown.body).to.deep.equal({ detail: `Run ${ABSENT_ID} has no approval for ask`, code: 'NOT_FOUND' });

    for (const token of [t2Decider.token, t2Admin.token]) {
      const byStep = await call(service.url, 'POST', `/api/runs/${run.body.id}/human/ask`, {
        token,
        json: { decision: 'approve', values: { granted_days: 4 } },
      });
      expect(byStep.status, JSON.stringify(byStep.body)).to.equal(404);
      expect(byStep.body).to.deep.equal({ detail: `Run ${run.body.id} has no approval for ask`, code: 'NOT_FOUND' });
      expect(JSON.stringify(byStep.body)).to.not.include(approvalId);
      const byId = await call(service.url, 'POST', `/api/approvals/${approvalId}`, { token, json: { decision: 'approve', values: { granted_days: 4 } } });
      expect(byId.body).to.deep.equal({ detail: `Approval ${approvalId} not found`, code: 'NOT_FOUND' });
      expect(((await call(service.url, 'GET', '/api/approvals', { token })).body as { approval_id: string }[]).map((a) => a.approval_id)).to.not.include(
        approvalId,
      );
    }
    const still = await call(service.url, 'GET', `/api/runs/${run.body.id}`, { token: t1Decider.token });
    expect(still.body.status).to.equal('waiting_human');
    const decided = await call(service.url, 'POST', `/api/runs/${run.body.id}/human/ask`, {
      token: t1Decider.token,
      json: { decision: 'approve', values: { granted_days: 4 } },
    });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
  });
});
