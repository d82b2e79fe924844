// Tool approvals with a required_group: only members of the group holding approvals:decide decide, never the requester.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { createUser } from '../support/users.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { startAgentService } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

type User = { id: string; token: string };

describe('Agent tool approvals with required_group', function () {
  this.timeout(30_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let service: Service;
  let admin: { token: string; userId: string };
  /** In the group ops, without approvals:decide. */
  let opsMember: User;
  /** In ops, with approvals:decide (from the role deciders). */
  let opsDecider: User;
  /** Also in ops with approvals:decide. */
  let otherOpsDecider: User;
  /** approvals:decide, not in ops. */
  let outsideDecider: User;

  const decide = (token: string, approvalId: string, body: unknown) => call(service.url, 'POST', `/api/approvals/${approvalId}`, { token, json: body });
  const decideByStep = (token: string, runId: string, body: unknown) => call(service.url, 'POST', `/api/runs/${runId}/human/agent`, { token, json: body });
  const listedIds = async (token: string): Promise<string[]> => {
    const listed = await call(service.url, 'GET', '/api/approvals', { token });
    expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
    return (listed.body as { approval_id: string }[]).map((a) => a.approval_id);
  };

  before(async function () {
    this.timeout(60_000);
    service = await startAgentService(fake, mcp);
    admin = await bootstrapAdmin(service.url);
    opsMember = await createUser(service.url, admin.token, 'ops-member@example.com', { ops: ['runs:read'] });
    opsDecider = await createUser(service.url, admin.token, 'ops-decider@example.com', { ops: ['runs:read'], deciders: ['approvals:decide'] });
    otherOpsDecider = await createUser(service.url, admin.token, 'ops-decider-2@example.com', { ops: ['runs:read'], deciders: ['approvals:decide'] });
    outsideDecider = await createUser(service.url, admin.token, 'outside-decider@example.com', { deciders: ['approvals:decide'] });
  });
  after(async () => {
    await service?.close();
    await fake.stop();
    await mcp.stop();
  });

  /** Triggers ops_helper as `token` until the model asks to open a ticket; answers the run id and approval id. */
  async function untilApproval(token: string, key: string, finalAnswer: string): Promise<{ runId: string; approvalId: string }> {
    fake.script(key, [{ toolCalls: [{ name: 'file_ticket', args: { subject: `Disk full ${key}` }, id: `call_${key}` }] }, { content: finalAnswer }]);
    const started = await client(service.url, token).post('/api/agents/ops', { question: key });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    expect(started.body.status).to.equal('waiting_approval');
    expect(started.body.approval).to.include({ kind: 'tool', title: 'Run the tool file_ticket' });
    return { runId: started.body.id as string, approvalId: started.body.approval.approval_id as string };
  }

  /** Nothing ran and the run still waits: the refusals changed nothing. */
  async function expectStillWaiting(runId: string): Promise<void> {
    expect((await call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token })).body.status).to.equal('waiting_approval');
    const journal = await journalOf(service.url, admin.token, runId);
    expect(journal.filter((e) => e.type === 'approval_decided' || e.type === 'tool_call')).to.have.length(0);
  }

  it('requested by iam:admin: the admin, a member without approvals:decide and a decider outside the group get 403; a member with approvals:decide decides', async () => {
    const key = 'ops-ticket-51';
    const { runId, approvalId } = await untilApproval(admin.token, key, 'Ticket opened for ops.');

    // The requester, even as iam:admin (which passes every group and scope otherwise).
    expect(await listedIds(admin.token)).to.not.include(approvalId);
    const byAdmin = await decide(admin.token, approvalId, { decision: 'approve' });
    expect(byAdmin.status, JSON.stringify(byAdmin.body)).to.equal(403);
    expect(byAdmin.body.code).to.equal('PERMISSION_DENIED');
    expect((await decideByStep(admin.token, runId, { decision: 'approve' })).status).to.equal(403);

    // In the group, without approvals:decide.
    expect((await call(service.url, 'GET', '/api/approvals', { token: opsMember.token })).status).to.equal(403);
    const byMember = await decide(opsMember.token, approvalId, { decision: 'approve' });
    expect(byMember.status, JSON.stringify(byMember.body)).to.equal(403);
    expect((await decideByStep(opsMember.token, runId, { decision: 'reject' })).status).to.equal(403);

    // approvals:decide, outside the group.
    expect(await listedIds(outsideDecider.token)).to.not.include(approvalId);
    const byOutsider = await decide(outsideDecider.token, approvalId, { decision: 'approve' });
    expect(byOutsider.status, JSON.stringify(byOutsider.body)).to.equal(403);
    await expectStillWaiting(runId);

    // A member of ops with approvals:decide sees it and decides it.
    const seen = ((await call(service.url, 'GET', '/api/approvals', { token: opsDecider.token })).body as any[]).find((a) => a.approval_id === approvalId);
    expect(seen, 'listed for an ops decider').to.not.equal(undefined);
    expect(seen).to.include({ kind: 'tool', step_id: 'agent', run_id: runId, workflow: 'ops_helper', required_group: 'ops', status: 'pending' });
    const decided = await decide(opsDecider.token, approvalId, { decision: 'approve', comment: 'go' });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect(decided.body).to.include({ status: 'decided', decision: 'approve', decided_by: opsDecider.id });

    const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    expect(run.output).to.deep.include({ answer: 'Ticket opened for ops.', ticket: { subject: `Disk full ${key}`, status: 'open' } });
    const journal = await journalOf(service.url, admin.token, runId);
    const requested = journal.find((e) => e.type === 'approval_requested');
    expect(requested.payload.approval).to.include({ required_group: 'ops', requester_id: admin.userId });
    expect(journal.filter((e) => e.type === 'approval_decided').map((e) => e.payload)).to.have.length(1);
    expect(journal.find((e) => e.type === 'approval_decided').payload).to.include({ decision: 'approve', decided_by: opsDecider.id });
    expect(journal.filter((e) => e.type === 'tool_call')).to.have.length(1);
  });

  it('requested by a member of the group holding approvals:decide: that member gets 403, another member decides', async () => {
    const key = 'ops-ticket-52';
    const { runId, approvalId } = await untilApproval(opsDecider.token, key, 'No ticket.');
    expect(await listedIds(opsDecider.token)).to.not.include(approvalId);
    const own = await decide(opsDecider.token, approvalId, { decision: 'approve' });
    expect(own.status, JSON.stringify(own.body)).to.equal(403);
    expect(own.body.code).to.equal('PERMISSION_DENIED');
    expect((await decideByStep(opsDecider.token, runId, { decision: 'edit', edited_args: { subject: 'mine' } })).status).to.equal(403);
    await expectStillWaiting(runId);

    expect(await listedIds(otherOpsDecider.token)).to.include(approvalId);
    const decided = await decideByStep(otherOpsDecider.token, runId, { decision: 'reject', comment: 'not a ticket' });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect(decided.body).to.include({ approval_id: approvalId, decision: 'reject', decided_by: otherOpsDecider.id });
    const run = await waitForStatus(service.url, opsDecider.token, runId, ['completed', 'failed']);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
    expect(run.output.answer).to.equal('No ticket.');
    const journal = await journalOf(service.url, admin.token, runId);
    expect(
      journal.filter((e) => e.type === 'tool_call'),
      'a rejected tool never runs',
    ).to.have.length(0);
    expect((await decide(opsDecider.token, approvalId, { decision: 'approve' })).status, "still not the requester's to decide").to.equal(403);
  });

  it('iam:admin who did not request it passes the group', async () => {
    const key = 'ops-ticket-53';
    const { runId, approvalId } = await untilApproval(opsMember.token, key, "Opened by the admin's leave.");
    expect(await listedIds(admin.token)).to.include(approvalId);
    const decided = await decide(admin.token, approvalId, { decision: 'approve' });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    expect(decided.body).to.include({ decided_by: admin.userId });
    const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
    expect(run.status, JSON.stringify(run)).to.equal('completed');
  });
});
