// Autonomous Agent steps: tools run one at a time and are journaled; tokens and progress events; the
// streaming trigger's Agent frames; steer, pause/resume and abort mid-loop; tool approvals.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { journalOf, privateKeys, waitForEvent, waitForStatus } from '../support/runs.js';
import { readSse } from '../support/sse.js';
import { createUser } from '../support/users.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { startAgentService } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

const PROGRESS_KEYS = ['type', 'iteration', 'tool_calls', 'tokens_used', 'tool', 'signal'];

describe('Agent steps: autonomous mode', function () {
  this.timeout(30_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let service: Service;
  let admin: { token: string; userId: string };
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    service = await startAgentService(fake, mcp);
    admin = await bootstrapAdmin(service.url);
    api = client(service.url, admin.token);
  });
  after(async () => {
    await service?.close();
    await fake.stop();
    await mcp.stop();
  });

  /** Starts a helper run without waiting; answers its id. */
  async function startHelper(question: string): Promise<string> {
    const started = await api.post('/api/workflows/helper/runs?wait=false', { question });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    return started.body.id as string;
  }

  describe('tools', () => {
    it('runs the tools of one answer one at a time, journals tool_call/tool_result, and sends the results back to the model', async () => {
      const key = 'two-tools-21';
      fake.script(key, [
        {
          toolCalls: [
            { name: 'lookup', args: { query: 'alpha' }, id: 'call_lookup' },
            { name: 'mcp_echo', args: { text: 'beta' }, id: 'call_echo' },
          ],
          usage: { prompt_tokens: 100, completion_tokens: 20 },
        },
        { content: 'Found 3 hits and an echo.', usage: { prompt_tokens: 50, completion_tokens: 10 } },
      ]);
      const result = await api.post('/api/agents/helper', { question: key });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body.answer).to.equal('Found 3 hits and an echo.');
      expect(result.body.looked_up).to.deep.equal({ query: 'alpha', hits: 3 });
      expect(result.body.echo).to.deep.equal({ echoed: 'beta', via: 'stdio' });

      const journal = await journalOf(service.url, admin.token, result.headers.get('x-svc-run-id')!);
      expect(privateKeys(journal)).to.deep.equal([]);
      const loop = journal
        .filter((e) => ['llm_turn', 'tool_call', 'tool_result'].includes(e.type))
        .map((e) => `${e.type}:${e.payload.tool ?? e.payload.iteration}`);
      expect(loop, 'each call is followed by its result before the next call starts').to.deep.equal([
        'llm_turn:1',
        'tool_call:lookup',
        'tool_result:lookup',
        'tool_call:mcp_echo',
        'tool_result:mcp_echo',
        'llm_turn:2',
      ]);
      expect(
        journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.tokens_used),
        'tokens_used is cumulative',
      ).to.deep.equal([120, 180]);
      const calls = journal.filter((e) => e.type === 'tool_call');
      expect(calls.map((e) => [e.payload.call_id, e.payload.args])).to.deep.equal([
        ['call_lookup', { query: 'alpha' }],
        ['call_echo', { text: 'beta' }],
      ]);
      const echoResult = journal.find((e) => e.type === 'tool_result' && e.payload.tool === 'mcp_echo');
      expect(echoResult.payload.signal).to.equal('default');
      expect(echoResult.payload.result).to.deep.equal({ echo: { echoed: 'beta', via: 'stdio' } });

      const progress = journal.filter((e) => e.type === 'agent_progress').map((e) => e.payload);
      expect(progress.map((p) => p.type)).to.deep.equal(['iteration', 'tool_call', 'tool_call', 'iteration', 'outcome']);
      expect(progress[0]).to.deep.equal({ type: 'iteration', iteration: 1, tool_calls: 2, tokens_used: 120 });
      expect(progress[1]).to.include({ type: 'tool_call', tool: 'lookup', iteration: 1 });
      expect(progress[4]).to.deep.equal({ type: 'outcome', signal: 'default', iteration: 2, tokens_used: 180 });

      const [first, second] = fake.requestsFor(key);
      expect(first!.tools.map((t) => [t.type, t.function.name, t.function.description])).to.deep.equal([
        ['function', 'lookup', 'Looks a query up in the knowledge base.'],
        ['function', 'mcp_echo', 'Echoes a text through the stdio MCP server.'],
        ['function', 'file_ticket', 'Opens a support ticket.'],
      ]);
      expect(first!.tools[0]!.function.parameters).to.deep.equal({ type: 'object', properties: { query: { type: 'string' } }, required: ['query'] });
      expect(second!.messages.map((m) => m.role)).to.deep.equal(['system', 'user', 'assistant', 'tool', 'tool']);
      expect(second!.messages[2]!.tool_calls).to.have.length(2);
      expect(second!.messages[3]!.tool_call_id).to.equal('call_lookup');
      expect(JSON.parse(String(second!.messages[3]!.content))).to.deep.equal({ signal: 'default', result: { looked_up: { query: 'alpha', hits: 3 } } });
      expect(second!.messages[4]!.tool_call_id).to.equal('call_echo');
    });

    it('malformed tool arguments and unknown tools are answered to the model as errors, not run', async () => {
      const key = 'bad-tool-args-22';
      fake.script(key, [
        {
          toolCalls: [
            { name: 'lookup', args: '{"query": ', id: 'call_bad' },
            { name: 'drop_database', args: {}, id: 'call_unknown' },
          ],
        },
        { content: 'I could not look it up.' },
      ]);
      const result = await api.post('/api/agents/helper', { question: key });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body.looked_up ?? null).to.equal(null);
      const second = fake.requestsFor(key)[1]!;
      const toolMessages = second.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, JSON.parse(String(m.content)).result.error]);
      expect(toolMessages[0]![0]).to.equal('call_bad');
      expect(toolMessages[0]![1]).to.match(/malformed arguments/);
      expect(toolMessages[1]).to.deep.equal(['call_unknown', 'unknown tool drop_database']);
      const journal = await journalOf(service.url, admin.token, result.headers.get('x-svc-run-id')!);
      expect(
        journal.filter((e) => e.type === 'tool_call'),
        'nothing ran',
      ).to.have.length(0);
      expect(journal.filter((e) => e.type === 'tool_result').map((e) => e.payload.signal)).to.deep.equal(['error', 'error']);
    });

    it('a tool call id the model uses again in a later turn is a new call: both run and are journaled', async () => {
      const key = 'reused-call-id-24';
      fake.script(key, [
        { toolCalls: [{ name: 'lookup', args: { query: 'first' }, id: 'call_1' }] },
        { toolCalls: [{ name: 'lookup', args: { query: 'second' }, id: 'call_1' }] },
        { content: 'Looked it up twice.' },
      ]);
      const result = await api.post('/api/agents/helper', { question: key });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body.answer).to.equal('Looked it up twice.');
      expect(result.body.looked_up).to.deep.equal({ query: 'second', hits: 3 });

      const journal = await journalOf(service.url, admin.token, result.headers.get('x-svc-run-id')!);
      const entries = (type: string) =>
        journal.filter((e) => e.type === type).map((e) => [e.payload.iteration, e.payload.call_id, e.payload.args ?? e.payload.result]);
      expect(entries('tool_call')).to.deep.equal([
        [1, 'call_1', { query: 'first' }],
        [2, 'call_1', { query: 'second' }],
      ]);
      expect(entries('tool_result')).to.deep.equal([
        [1, 'call_1', { looked_up: { query: 'first', hits: 3 } }],
        [2, 'call_1', { looked_up: { query: 'second', hits: 3 } }],
      ]);
      const last = fake.requestsFor(key)[2]!;
      expect(
        last.messages.map((m) => m.role),
        'each turn has its tool answer',
      ).to.deep.equal(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
      expect(last.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)).result.looked_up.query)).to.deep.equal([
        'first',
        'second',
      ]);
    });
  });

  it('the streaming trigger sends Agent progress frames (signal running) carrying loop metadata only', async () => {
    const key = 'streamed-secret-question-23';
    fake.script(key, [
      { toolCalls: [{ name: 'lookup', args: { query: 'streamed-query' } }], usage: { prompt_tokens: 7, completion_tokens: 3 } },
      { content: 'streamed answer' },
    ]);
    const stream = await readSse(`${service.url}/api/agents/helper`, { method: 'POST', token: admin.token, json: { question: key } });
    expect(stream.status, stream.text).to.equal(200);
    const running = stream.frames.filter((f) => f.event === 'step' && f.data.signal === 'running');
    expect(running.length, stream.text).to.be.greaterThan(0);
    for (const frame of running) {
      expect(frame.data).to.include({ event_type: 'step', step_id: 'agent', kind: 'Agent', signal: 'running' });
      expect(Object.keys(frame.data.snapshot), 'no context values in a progress frame').to.deep.equal(['agent_progress']);
      expect(
        Object.keys(frame.data.snapshot.agent_progress).every((k) => PROGRESS_KEYS.includes(k)),
        JSON.stringify(frame.data),
      ).to.equal(true);
      expect(JSON.stringify(frame.data)).to.not.include(key).and.not.include('streamed-query').and.not.include('streamed answer');
      expect(frame.data.snapshot.agent_progress.iteration).to.be.a('number').greaterThanOrEqual(1);
      expect(frame.data.snapshot.agent_progress.tokens_used).to.be.a('number');
    }
    const progress = running.map((f) => f.data.snapshot.agent_progress);
    expect(progress.map((p) => p.type)).to.deep.equal(['iteration', 'tool_call', 'iteration', 'outcome']);
    expect(progress[0]).to.include({ iteration: 1, tokens_used: 10, tool_calls: 1 });
    expect(progress[1]).to.include({ iteration: 1, tool: 'lookup' });
    expect(progress[3]).to.include({ iteration: 2, tokens_used: 25, signal: 'default' });
    const agentDone = stream.frames.find((f) => f.event === 'step' && f.data.step_id === 'agent' && f.data.signal !== 'running');
    expect(agentDone?.data).to.include({ kind: 'Agent', signal: 'default' });
    const done = stream.frames.at(-1)!;
    expect(done.event).to.equal('done');
    expect(done.data.output.answer).to.equal('streamed answer');
  });

  describe('run control mid-loop', () => {
    it('steer: a message sent while the model is slow reaches the next model request', async () => {
      const key = 'steer-me-31';
      const steer = 'STEER-31: answer in French';
      fake.script(key, [{ toolCalls: [{ name: 'lookup', args: { query: 'x' } }], delayMs: 1200 }, { content: 'Bonjour' }]);
      const reader = await createUser(service.url, admin.token, 'no-control@example.com', { run_reader: ['runs:read'] });
      const runId = await startHelper(key);
      await fake.waitForRequests(key, 1);
      const refused = await client(service.url, reader.token).post(`/api/runs/${runId}/steer`, { message: 'not allowed' });
      expect(refused.status, 'steer needs runs:control').to.equal(403);
      const steered = await api.post(`/api/runs/${runId}/steer`, { message: steer });
      expect(steered.status, JSON.stringify(steered.body)).to.equal(200);
      const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      const [first, second] = fake.requestsFor(key);
      expect(JSON.stringify(first!.messages)).to.not.include(steer);
      expect(second!.messages.filter((m) => m.role === 'user').map((m) => m.content)).to.deep.equal([key, steer]);
      expect(JSON.stringify(second!.messages)).to.not.include('not allowed');
      const journal = await journalOf(service.url, admin.token, runId);
      expect(journal.filter((e) => e.type === 'steered').map((e) => e.payload.message)).to.deep.equal([steer]);
      expect(journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.steers)).to.deep.equal([[], [steer]]);
    });

    it('pause stops before the next iteration (no further model call); resume continues the same conversation', async () => {
      const key = 'pause-me-32';
      fake.script(key, [{ toolCalls: [{ name: 'lookup', args: { query: 'paused' } }], delayMs: 800 }, { content: 'after the pause' }]);
      const runId = await startHelper(key);
      await fake.waitForRequests(key, 1);
      const paused = await api.post(`/api/runs/${runId}/pause`);
      expect(paused.status, JSON.stringify(paused.body)).to.equal(200);
      await waitForEvent(service.url, admin.token, runId, 'llm_turn');
      await waitForStatus(service.url, admin.token, runId, ['paused']);
      await sleep(700);
      expect(fake.requestsFor(key), 'no model call while paused').to.have.length(1);
      expect((await api.get(`/api/runs/${runId}`)).body.status).to.equal('paused');

      const resumed = await api.post(`/api/runs/${runId}/resume`);
      expect(resumed.status, JSON.stringify(resumed.body)).to.equal(200);
      const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      expect(run.output.answer).to.equal('after the pause');
      const requests = fake.requestsFor(key);
      expect(requests).to.have.length(2);
      expect(
        requests[1]!.messages.map((m) => m.role),
        'the resumed turn carries the journaled conversation',
      ).to.deep.equal(['system', 'user', 'assistant', 'tool']);
      const journal = await journalOf(service.url, admin.token, runId);
      const types = journal.map((e) => e.type);
      expect(types.indexOf('paused')).to.be.lessThan(types.indexOf('resumed'));
      expect(journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.iteration)).to.deep.equal([1, 2]);
      expect(
        journal.filter((e) => e.type === 'tool_call'),
        'the tool ran once',
      ).to.have.length(1);
      expect(journal.filter((e) => e.type === 'llm_turn' && e.payload.iteration === 2)[0].seq).to.be.greaterThan(journal.find((e) => e.type === 'resumed').seq);
    });

    it('abort while the model is slow ends the run as aborted; the late answer is never journaled', async () => {
      const key = 'abort-me-33';
      fake.script(key, [{ toolCalls: [{ name: 'lookup', args: { query: 'late' } }], delayMs: 1000 }, { content: 'never asked' }]);
      const runId = await startHelper(key);
      await fake.waitForRequests(key, 1);
      const aborted = await api.post(`/api/runs/${runId}/abort`, { reason: 'changed my mind' });
      expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);
      const run = await waitForStatus(service.url, admin.token, runId, ['aborted', 'completed', 'failed']);
      expect(run.status).to.equal('aborted');
      // Past the slow answer: it arrives, and is dropped.
      await sleep(1300);
      expect(fake.requestsFor(key), 'no second model call').to.have.length(1);
      const journal = await journalOf(service.url, admin.token, runId);
      expect(journal.at(-1).type).to.equal('run_aborted');
      expect(journal.filter((e) => ['llm_turn', 'tool_call', 'tool_result', 'step_completed', 'step_failed'].includes(e.type))).to.have.length(0);
      expect((await api.post(`/api/runs/${runId}/resume`)).status, 'an aborted run takes no more control').to.equal(409);
    });
  });

  describe('tool approvals', () => {
    /** Runs the helper until it asks to open a ticket; answers the run id and the approval. */
    async function untilApproval(key: string, finalAnswer: string) {
      fake.script(key, [{ toolCalls: [{ name: 'file_ticket', args: { subject: 'Printer on fire' }, id: `call_${key}` }] }, { content: finalAnswer }]);
      const result = await api.post('/api/agents/helper', { question: key });
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      expect(result.body.status).to.equal('waiting_approval');
      expect(result.body.approval).to.include({ kind: 'tool', title: 'Run the tool file_ticket' });
      expect(result.body.approval.form).to.deep.equal({ tool: 'file_ticket', args: { subject: 'Printer on fire' } });
      const pending = (await api.get('/api/approvals')).body as any[];
      const approval = pending.find((a) => a.approval_id === result.body.approval.approval_id);
      expect(approval, JSON.stringify(pending)).to.include({ kind: 'tool', step_id: 'agent', run_id: result.body.id });
      const journal = await journalOf(service.url, admin.token, result.body.id);
      expect(
        journal.filter((e) => e.type === 'tool_call'),
        'nothing runs before the decision',
      ).to.have.length(0);
      return { runId: result.body.id as string, approvalId: approval.approval_id as string };
    }

    async function finished(runId: string, key: string) {
      const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      const requests = fake.requestsFor(key);
      expect(requests, 'the first turn is not asked again after the decision').to.have.length(2);
      const toolMessage = requests[1]!.messages.find((m) => m.role === 'tool')!;
      return { run, journal: await journalOf(service.url, admin.token, runId), told: JSON.parse(String(toolMessage.content)) };
    }

    it('approve: the tool runs with the arguments the model gave', async () => {
      const key = 'approve-ticket-41';
      const { runId, approvalId } = await untilApproval(key, 'Ticket opened.');
      const decided = await api.post(`/api/approvals/${approvalId}`, { decision: 'approve' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      const { run, journal, told } = await finished(runId, key);
      expect(run.output).to.include({ answer: 'Ticket opened.' });
      expect(run.output.ticket).to.deep.equal({ subject: 'Printer on fire', status: 'open' });
      expect(told).to.deep.equal({ signal: 'default', result: { ticket: { subject: 'Printer on fire', status: 'open' } } });
      expect(journal.find((e) => e.type === 'approval_decided').payload).to.include({ decision: 'approve', decided_by: admin.userId });
      expect(journal.filter((e) => e.type === 'tool_call').map((e) => e.payload.args)).to.deep.equal([{ subject: 'Printer on fire' }]);
      expect((await api.post(`/api/approvals/${approvalId}`, { decision: 'reject' })).status, 'a second answer').to.equal(409);
    });

    it('edit: the tool runs with edited_args, and the model is told the edited result', async () => {
      const key = 'edit-ticket-42';
      const { runId, approvalId } = await untilApproval(key, 'Ticket opened as edited.');
      const decided = await api.post(`/api/approvals/${approvalId}`, { decision: 'edit', edited_args: { subject: 'Printer smoking' }, comment: 'less drama' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      const { run, journal, told } = await finished(runId, key);
      expect(run.output.ticket).to.deep.equal({ subject: 'Printer smoking', status: 'open' });
      expect(told.result).to.deep.equal({ ticket: { subject: 'Printer smoking', status: 'open' } });
      expect(journal.filter((e) => e.type === 'tool_call').map((e) => e.payload.args)).to.deep.equal([{ subject: 'Printer smoking' }]);
      expect(journal.find((e) => e.type === 'approval_decided').payload.edited_args).to.deep.equal({ subject: 'Printer smoking' });
    });

    it('edit: edited arguments pass the tool guardrails too; a denied edit never runs the tool', async () => {
      const key = 'edit-guarded-44';
      const { runId, approvalId } = await untilApproval(key, 'never said');
      expect((await api.post(`/api/approvals/${approvalId}`, { decision: 'edit' })).status, 'edit without edited_args').to.equal(400);
      const decided = await api.post(`/api/approvals/${approvalId}`, { decision: 'edit', edited_args: { subject: 'x; DROP TABLE users' } });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      // A guardrail exit routed to END fails the run (as for the model's own arguments).
      const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
      expect(run.status, JSON.stringify(run)).to.equal('failed');
      expect(run.error.message).to.match(/tool guardrail \(edited arguments\): tool_rules: matches a denied pattern/);
      const journal = await journalOf(service.url, admin.token, runId);
      expect(
        journal.filter((e) => e.type === 'tool_call'),
        'the edited call never runs',
      ).to.have.length(0);
      const failed = journal.find((e) => e.type === 'step_completed' && e.agent_id === 'agent');
      expect(failed.payload.signal).to.equal('guardrail_violation');
    });

    it('a call id reused in a later turn asks for its own approval after the resume, and runs with its own arguments', async () => {
      const key = 'reused-approval-id-45';
      fake.script(key, [
        { toolCalls: [{ name: 'file_ticket', args: { subject: 'First ticket' }, id: 'call_1' }] },
        { toolCalls: [{ name: 'file_ticket', args: { subject: 'Second ticket' }, id: 'call_1' }] },
        { content: 'Two tickets opened.' },
      ]);
      const result = await api.post('/api/agents/helper', { question: key });
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      const runId = result.body.id as string;
      const first = result.body.approval;
      expect(first.form).to.deep.equal({ tool: 'file_ticket', args: { subject: 'First ticket' } });
      expect((await api.post(`/api/approvals/${first.approval_id}`, { decision: 'approve' })).status).to.equal(200);

      // The run resumes from its journal, where call_1 of turn 1 is approved and done: turn 2's call_1 is not.
      const asked = await waitForEvent(service.url, admin.token, runId, 'approval_requested', (e) => e.payload.approval.form.args.subject === 'Second ticket');
      const second = asked.filter((e) => e.type === 'approval_requested').at(-1).payload.approval;
      expect(second).to.include({ call_id: 'call_1' });
      expect(second.approval_id).to.not.equal(first.approval_id);
      expect(
        asked.filter((e) => e.type === 'tool_call'),
        'turn 2 waits for its decision',
      ).to.have.length(1);
      await waitForStatus(service.url, admin.token, runId, ['waiting_approval']);
      expect((await api.post(`/api/approvals/${second.approval_id}`, { decision: 'approve' })).status).to.equal(200);

      const run = await waitForStatus(service.url, admin.token, runId, ['completed', 'failed']);
      expect(run.status, JSON.stringify(run)).to.equal('completed');
      expect(run.output).to.include({ answer: 'Two tickets opened.' });
      expect(run.output.ticket).to.deep.equal({ subject: 'Second ticket', status: 'open' });
      const journal = await journalOf(service.url, admin.token, runId);
      expect(journal.filter((e) => e.type === 'tool_call').map((e) => [e.payload.iteration, e.payload.call_id, e.payload.args])).to.deep.equal([
        [1, 'call_1', { subject: 'First ticket' }],
        [2, 'call_1', { subject: 'Second ticket' }],
      ]);
      expect(journal.filter((e) => e.type === 'tool_result').map((e) => [e.payload.iteration, e.payload.result])).to.deep.equal([
        [1, { ticket: { subject: 'First ticket', status: 'open' } }],
        [2, { ticket: { subject: 'Second ticket', status: 'open' } }],
      ]);
      expect(fake.requestsFor(key), 'no turn is asked twice').to.have.length(3);
    });

    it('reject: the tool never runs and the model is told it was rejected', async () => {
      const key = 'reject-ticket-43';
      const { runId, approvalId } = await untilApproval(key, 'No ticket, then.');
      const decided = await api.post(`/api/approvals/${approvalId}`, { decision: 'reject', comment: 'not now' });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      const { run, journal, told } = await finished(runId, key);
      expect(run.output.answer).to.equal('No ticket, then.');
      expect(run.output.ticket ?? null).to.equal(null);
      expect(told.signal).to.equal('error');
      expect(told.result).to.deep.equal({ rejected: true, error: 'a human rejected this tool call' });
      expect(
        journal.filter((e) => e.type === 'tool_call'),
        'a rejected tool never runs',
      ).to.have.length(0);
    });
  });
});
