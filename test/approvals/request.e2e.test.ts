// A HumanInTheLoop step asks: 202 with the run descriptor and its approval, the `suspended` stream frame, approval_requested.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { journalOf, waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { readSse } from '../support/sse.js';
import { HITL_PROJECT, requestRefund, SIGNING_KEY, UUID } from './helpers.js';

const FORM = [
  { name: 'note', type: 'string' },
  { name: 'refunded', type: 'float', required: true },
  { name: 'channel', type: 'string', options: ['card', 'voucher'] },
];

describe('approvals: a HumanInTheLoop step asks for a decision', function () {
  this.timeout(30_000);
  let service: Service;
  let admin: Admin;

  before(async function () {
    this.timeout(60_000);
    service = await startTestService({ projectDir: HITL_PROJECT, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => {
    await service?.close();
  });

  it('the trigger answers 202 with the run descriptor: status waiting_human and the approval (id, kind, title, form, decide_url)', async () => {
    const before = Date.now();
    const result = await call(service.url, 'POST', '/api/refunds', { token: admin.token, json: { order_id: 'A1', amount: 500, reason: 'broken' } });
    expect(result.status, JSON.stringify(result.body)).to.equal(202);
    const run = result.body;
    expect(run.id).to.match(UUID);
    expect(result.headers.get('x-svc-run-id')).to.equal(run.id);
    expect(run).to.include({ workflow: 'refund', schema_version: 'v1', status: 'waiting_human', current_step: 'review', output: null, error: null });
    expect(run.input).to.deep.equal({ order_id: 'A1', amount: 500, reason: 'broken' });
    expect(run.status_url).to.equal(`/api/runs/${run.id}`);
    expect(run.events_url).to.equal(`/api/runs/${run.id}/events`);
    expect(run.approval).to.be.an('object');
    expect(run.approval.approval_id).to.match(UUID);
    expect(run.approval).to.deep.equal({
      approval_id: run.approval.approval_id,
      kind: 'human',
      title: 'Approve a refund',
      form: FORM,
      decide_url: `/api/approvals/${run.approval.approval_id}`,
    });

    // The descriptor reads back the same, and the journal holds the request with its details.
    const read = await call(service.url, 'GET', `/api/runs/${run.id}`, { token: admin.token });
    expect(read.status).to.equal(200);
    expect(read.body).to.deep.include({ status: 'waiting_human', approval: run.approval });

    const journal = await journalOf(service.url, admin.token, run.id);
    expect(journal.map((e) => e.seq)).to.deep.equal(journal.map((_, i) => i + 1));
    expect(journal.map((e) => e.type)).to.deep.equal(['run_started', 'step_started', 'decision', 'step_completed', 'step_started', 'approval_requested']);
    const requested = journal.at(-1)!;
    expect(requested).to.include({ run_id: run.id, agent_id: 'review', engine: 'HumanInTheLoop' });
    const approval = requested.payload.approval;
    expect(approval).to.deep.include({
      approval_id: run.approval.approval_id,
      kind: 'human',
      step_id: 'review',
      title: 'Approve a refund',
      instruction: 'Check the order before refunding more than 100.',
      form: FORM,
      display: { order_id: 'A1', amount: 500, reason: 'broken' },
      required_group: 'finance',
      requester_id: admin.userId,
    });
    // expires_in_s: 86400 -> about a day after the request.
    const expiresIn = Date.parse(approval.expires_at) - before;
    expect(expiresIn).to.be.within(86_400_000 - 60_000, 86_400_000 + 60_000);
  });

  it('a refund under the threshold never asks: 201 at once, no approval in the journal', async () => {
    const result = await call(service.url, 'POST', '/api/refunds', { token: admin.token, json: { order_id: 'S1', amount: 20 } });
    expect(result.status, JSON.stringify(result.body)).to.equal(201);
    expect(result.body).to.deep.equal({ order_id: 'S1', amount: 20, refunded: 20 });
    const journal = await journalOf(service.url, admin.token, result.headers.get('x-svc-run-id')!);
    expect(journal.map((e) => e.type)).to.not.include('approval_requested');
  });

  it('the streaming trigger (Accept: text/event-stream) ends with a `suspended` frame carrying the run descriptor', async () => {
    const stream = await readSse(`${service.url}/api/refunds`, { method: 'POST', token: admin.token, json: { order_id: 'A2', amount: 250 } });
    expect(stream.status).to.equal(200);
    expect(stream.contentType).to.match(/^text\/event-stream/);
    expect(stream.frames.map((f) => f.event)).to.deep.equal(['step', 'suspended']);
    expect(stream.frames[0]!.data).to.include({ event_type: 'step', step_id: 'size', kind: 'Router', signal: 'true' });
    const suspended = stream.frames[1]!;
    expect(suspended.data.event_type).to.equal('suspended');
    const run = suspended.data.run;
    expect(run.id).to.match(UUID);
    expect(run).to.include({ workflow: 'refund', status: 'waiting_human', status_url: `/api/runs/${run.id}` });
    expect(run.approval).to.deep.equal({
      approval_id: run.approval.approval_id,
      kind: 'human',
      title: 'Approve a refund',
      form: FORM,
      decide_url: `/api/approvals/${run.approval.approval_id}`,
    });
    expect(run.approval.approval_id).to.match(UUID);
    // The frame's id is the seq of approval_requested in the journal.
    const journal = await journalOf(service.url, admin.token, run.id);
    const requested = journal.find((e) => e.type === 'approval_requested');
    expect(requested?.payload.approval.approval_id).to.equal(run.approval.approval_id);
    expect(suspended.id).to.equal(String(requested.seq));
  });

  it('POST /api/workflows/{name}/runs?wait=false answers 202 at once; the run then waits with its approval', async () => {
    const result = await call(service.url, 'POST', '/api/workflows/refund/runs?wait=false', { token: admin.token, json: { order_id: 'A3', amount: 900 } });
    expect(result.status).to.equal(202);
    const descriptor = await requestRefund(service.url, admin.token, 'A4');
    expect(descriptor.approval.approval_id).to.match(UUID);
    const run = await waitForStatus(service.url, admin.token, result.body.id, ['waiting_human']);
    expect(run.approval.title).to.equal('Approve a refund');
    expect(run.approval.approval_id).to.not.equal(descriptor.approval.approval_id);
  });
});
