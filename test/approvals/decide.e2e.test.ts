// Deciding: the run continues from the next step with the values under output_key; form validation; the journal and export.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { call, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import type { SignedInUser } from '../support/users.js';
import { ABSENT_ID, requestRefund, startApprovalService } from './helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

describe('approvals: deciding', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;
  let fin: SignedInUser;

  const decide = (approvalId: string, body: unknown, token = fin.token) => call(service.url, 'POST', `/api/approvals/${approvalId}`, { token, json: body });
  const runOf = (runId: string) => call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token });

  before(async function () {
    this.timeout(60_000);
    ({ service, admin, fin } = await startApprovalService());
  });
  after(async () => {
    await service?.close();
  });

  it('approve: 200 with the decided approval; the run continues from the next step with the values under output_key', async () => {
    const run = await requestRefund(service.url, admin.token, 'D1', 500);
    const approvalId = run.approval.approval_id as string;
    const before = Date.now();
    const result = await decide(approvalId, { decision: 'approve', values: { refunded: 450, note: 'ok', channel: 'card' }, comment: 'checked' });
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.deep.include({
      approval_id: approvalId,
      run_id: run.id,
      step_id: 'review',
      status: 'decided',
      decision: 'approve',
      decided_by: fin.id,
      values: { refunded: 450, note: 'ok', channel: 'card' },
      comment: 'checked',
    });
    expect(result.body.decided_at).to.match(ISO);
    expect(Date.parse(result.body.decided_at)).to.be.within(before - 5000, Date.now() + 5000);

    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ order_id: 'D1', refunded: 450, channel: 'card', approved_by: fin.id, comment: 'checked' });
    expect(done.approval).to.equal(null);
    expect(done.current_step).to.equal('approved');
    const read = await runOf(run.id);
    expect(read.body).to.deep.include({ status: 'completed', output: done.output });

    // Continued from the next step: nothing before the human step ran again, the step asked once.
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.map((e) => e.seq)).to.deep.equal(journal.map((_, i) => i + 1));
    expect(journal.map((e) => `${e.type}:${e.agent_id}`)).to.deep.equal([
      'run_started:run',
      'step_started:size',
      'decision:size',
      'step_completed:size',
      'step_started:review',
      'approval_requested:review',
      'approval_decided:review',
      'decision:review',
      'step_completed:review',
      'step_started:approved',
      'step_completed:approved',
      'run_completed:run',
    ]);
    const decided = journal.find((e) => e.type === 'approval_decided')!;
    expect(decided.engine).to.equal('HumanInTheLoop');
    expect(decided.payload).to.deep.equal({
      approval_id: approvalId,
      step_id: 'review',
      decision: 'approve',
      values: { refunded: 450, note: 'ok', channel: 'card' },
      comment: 'checked',
      decided_by: fin.id,
    });
    const decision = journal.filter((e) => e.type === 'decision' && e.agent_id === 'review');
    expect(decision).to.have.length(1);
    expect(decision[0].payload).to.deep.equal({ decision: 'approve', source: fin.id });
    for (const event of [decided, decision[0]]) {
      expect(event.ts).to.match(ISO);
      expect(Date.parse(event.ts)).to.be.at.least(Date.parse(journal.find((e) => e.type === 'approval_requested')!.ts));
    }
    const completed = journal.find((e) => e.type === 'step_completed' && e.agent_id === 'review')!;
    expect(completed.payload.signal).to.equal('approve');
    expect(completed.payload.next).to.equal('approved');
    expect(completed.payload.changes.set.review).to.deep.equal({
      decision: 'approve',
      values: { refunded: 450, note: 'ok', channel: 'card' },
      comment: 'checked',
      decided_by: fin.id,
    });
  });

  it('reject routes to the reject branch and needs no values', async () => {
    const run = await requestRefund(service.url, admin.token, 'D2', 700);
    const result = await decide(run.approval.approval_id, { decision: 'reject', comment: 'not ours' });
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.include({ status: 'decided', decision: 'reject', comment: 'not ours' });
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ order_id: 'D2', decision: 'reject', rejected_by: fin.id });
    expect(done.current_step).to.equal('rejected');
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'step_completed').map((e) => `${e.agent_id}:${e.payload.signal}`)).to.deep.equal([
      'size:true',
      'review:reject',
      'rejected:default',
    ]);
    expect(journal.find((e) => e.type === 'decision' && e.agent_id === 'review').payload).to.deep.equal({ decision: 'reject', source: fin.id });
  });

  it('reject needs no values, but values it does carry must match human_feedback (422)', async () => {
    const run = await requestRefund(service.url, admin.token, 'D8', 300);
    const approvalId = run.approval.approval_id as string;
    const wrongType = await decide(approvalId, { decision: 'reject', values: { refunded: 'lots' } });
    expect(wrongType.status, JSON.stringify(wrongType.body)).to.equal(422);
    expect(wrongType.body.detail.map((d: any) => ({ loc: d.loc, type: d.type }))).to.deep.include({ loc: ['body', 'values', 'refunded'], type: 'float_type' });
    const extra = await decide(approvalId, { decision: 'reject', values: { junk: { nested: true } } });
    expect(extra.status, JSON.stringify(extra.body)).to.equal(422);
    expect(extra.body.detail.map((d: any) => ({ loc: d.loc, type: d.type }))).to.deep.include({ loc: ['body', 'values', 'junk'], type: 'extra_forbidden' });
    // Partial values without the required field are fine for a rejection.
    const ok = await decide(approvalId, { decision: 'reject', values: { note: 'duplicate order' } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.values).to.deep.equal({ note: 'duplicate order' });
    await waitForStatus(service.url, admin.token, run.id, ['completed']);
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.filter((e) => e.type === 'approval_decided').map((e) => e.payload.values)).to.deep.equal([{ note: 'duplicate order' }]);
  });

  it('values are validated against human_feedback: 422 detail; the approval stays pending until a valid decision', async () => {
    const run = await requestRefund(service.url, admin.token, 'D3', 400);
    const approvalId = run.approval.approval_id as string;
    const cases: [unknown, { loc: unknown[]; type: string }][] = [
      [{}, { loc: ['body', 'values', 'refunded'], type: 'missing' }],
      [{ note: 'no amount' }, { loc: ['body', 'values', 'refunded'], type: 'missing' }],
      [{ refunded: 'lots' }, { loc: ['body', 'values', 'refunded'], type: 'float_type' }],
      [
        { refunded: 10, note: 12 },
        { loc: ['body', 'values', 'note'], type: 'string_type' },
      ],
      [
        { refunded: 10, channel: 'cash' },
        { loc: ['body', 'values', 'channel'], type: 'enum' },
      ],
      [
        { refunded: 10, bonus: true },
        { loc: ['body', 'values', 'bonus'], type: 'extra_forbidden' },
      ],
    ];
    for (const [values, issue] of cases) {
      const result = await decide(approvalId, { decision: 'approve', values });
      expect(result.status, `${JSON.stringify(values)}: ${JSON.stringify(result.body)}`).to.equal(422);
      expect(result.body.detail, JSON.stringify(values)).to.be.an('array');
      expect(
        result.body.detail.map((d: any) => ({ loc: d.loc, type: d.type })),
        JSON.stringify(values),
      ).to.deep.include(issue);
      for (const d of result.body.detail) expect(d.msg).to.be.a('string').and.not.equal('');
    }
    // Without values at all: the required field is missing.
    const none = await decide(approvalId, { decision: 'approve' });
    expect(none.status).to.equal(422);
    expect(none.body.detail.map((d: any) => d.loc)).to.deep.include(['body', 'values', 'refunded']);

    expect((await runOf(run.id)).body.status).to.equal('waiting_human');
    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.map((e) => e.type)).to.not.include('approval_decided');

    const ok = await decide(approvalId, { decision: 'approve', values: { refunded: 10.5, channel: 'voucher' } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.include({ refunded: 10.5, channel: 'voucher' });
  });

  it('a bad decision word is 400 (a person cannot send "expired"); a malformed body is 422', async () => {
    const run = await requestRefund(service.url, admin.token, 'D4');
    const approvalId = run.approval.approval_id as string;
    for (const word of ['maybe', 'expired', 'edit', 'APPROVE', '']) {
      const result = await decide(approvalId, { decision: word, values: { refunded: 1 } });
      expect(result.status, `${word}: ${JSON.stringify(result.body)}`).to.equal(400);
      expect(result.body.code).to.equal('BAD_REQUEST');
    }
    const missing = await decide(approvalId, { values: { refunded: 1 } });
    expect(missing.status, JSON.stringify(missing.body)).to.equal(422);
    expect(missing.body.detail).to.deep.include({ loc: ['body', 'decision'], msg: 'Field required', type: 'missing' });
    const extra = await decide(approvalId, { decision: 'approve', values: { refunded: 1 }, unexpected: 1 });
    expect(extra.status, JSON.stringify(extra.body)).to.equal(422);
    const wrongType = await decide(approvalId, { decision: 'approve', values: 'refunded' });
    expect(wrongType.status, JSON.stringify(wrongType.body)).to.equal(422);
    expect((await runOf(run.id)).body.status).to.equal('waiting_human');
  });

  it('an unknown approval id is 404, a non-uuid id is 404; unknown run or step on the by-step route is 404', async () => {
    const unknown = await decide(ABSENT_ID, { decision: 'approve', values: { refunded: 1 } });
    expect(unknown.status, JSON.stringify(unknown.body)).to.equal(404);
    expect(unknown.body.code).to.equal('NOT_FOUND');
    for (const id of ['not-a-uuid', '12345', `${ABSENT_ID}x`]) {
      const result = await decide(id, { decision: 'approve', values: { refunded: 1 } });
      expect(result.status, `${id}: ${JSON.stringify(result.body)}`).to.equal(404);
    }
    const run = await requestRefund(service.url, admin.token, 'D5');
    const wrongStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/size`, { token: fin.token, json: { decision: 'approve' } });
    expect(wrongStep.status, JSON.stringify(wrongStep.body)).to.equal(404);
    const noStep = await call(service.url, 'POST', `/api/runs/${run.id}/human/nope`, { token: fin.token, json: { decision: 'approve' } });
    expect(noStep.status).to.equal(404);
    const noRun = await call(service.url, 'POST', `/api/runs/${ABSENT_ID}/human/review`, { token: fin.token, json: { decision: 'approve' } });
    expect(noRun.status).to.equal(404);
    const badRun = await call(service.url, 'POST', '/api/runs/not-a-uuid/human/review', { token: fin.token, json: { decision: 'approve' } });
    expect(badRun.status).to.equal(404);
  });

  it('POST /api/runs/{id}/human/{step_id} decides the same way', async () => {
    const run = await requestRefund(service.url, admin.token, 'D6', 600);
    const bad = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, {
      token: fin.token,
      json: { decision: 'approve', values: { refunded: 'x' } },
    });
    expect(bad.status).to.equal(422);
    const badWord = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: { decision: 'perhaps' } });
    expect(badWord.status).to.equal(400);
    const result = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, {
      token: fin.token,
      json: { decision: 'approve', values: { refunded: 590 }, comment: 'by step' },
    });
    expect(result.status, JSON.stringify(result.body)).to.equal(200);
    expect(result.body).to.include({
      approval_id: run.approval.approval_id,
      run_id: run.id,
      status: 'decided',
      decision: 'approve',
      decided_by: fin.id,
      comment: 'by step',
    });
    const done = await waitForStatus(service.url, admin.token, run.id, ['completed']);
    expect(done.output).to.deep.equal({ order_id: 'D6', refunded: 590, channel: null, approved_by: fin.id, comment: 'by step' });
    const again = await call(service.url, 'POST', `/api/runs/${run.id}/human/review`, { token: fin.token, json: { decision: 'reject' } });
    expect(again.status, JSON.stringify(again.body)).to.equal(409);
  });

  it('the export shows who decided what and when', async () => {
    const run = await requestRefund(service.url, admin.token, 'D7', 200);
    const decided = await decide(run.approval.approval_id, { decision: 'approve', values: { refunded: 199 }, comment: 'audit me' });
    expect(decided.status).to.equal(200);
    await waitForStatus(service.url, admin.token, run.id, ['completed']);
    const exported = await call(service.url, 'GET', `/api/runs/${run.id}/export`, { token: admin.token });
    expect(exported.status, JSON.stringify(exported.body)).to.equal(200);
    expect(exported.body.format).to.equal('svc.run/v1');
    expect(exported.body.run).to.include({ id: run.id, status: 'completed' });
    expect(exported.body.workflow).to.include({ name: 'refund', schema_version: 'v1' });
    const events = exported.body.events as any[];
    const approvalDecided = events.filter((e) => e.type === 'approval_decided');
    expect(approvalDecided).to.have.length(1);
    expect(approvalDecided[0]).to.include({ run_id: run.id, agent_id: 'review' });
    expect(approvalDecided[0].payload).to.include({ approval_id: run.approval.approval_id, decision: 'approve', decided_by: fin.id, comment: 'audit me' });
    expect(approvalDecided[0].payload.values).to.deep.equal({ refunded: 199 });
    expect(approvalDecided[0].ts).to.match(ISO);
    const decision = events.filter((e) => e.type === 'decision' && e.agent_id === 'review');
    expect(decision).to.have.length(1);
    expect(decision[0].payload).to.deep.equal({ decision: 'approve', source: fin.id });
    expect(decision[0].ts).to.match(ISO);
    expect(decision[0].seq).to.equal(approvalDecided[0].seq + 1);
    // The approval row agrees with the journal on when.
    expect(Date.parse(decided.body.decided_at)).to.equal(Date.parse(approvalDecided[0].ts));
  });
});
