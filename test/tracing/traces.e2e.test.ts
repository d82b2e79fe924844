// OpenTelemetry traces of runs, received by a loopback OTLP/HTTP receiver from real `svc serve`
// processes: the HTTP request (under the caller's traceparent) -> the run -> its steps -> the
// APICall's request (its traceparent seen by the called server) and the LLM call with token counts;
// a run whose process was SIGKILLed mid-step, or while it waited for a person, continues its trace on
// the process that takes it over;
// and with no endpoint (or the SDK disabled) nothing is exported and no traceparent leaves.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { FakeOpenAi } from '../agents/support/fakeOpenAi.js';
import { McpHttpServer } from '../agents/support/mcpHttpServer.js';
import { OtlpReceiver, parseTraceparent, TracedApi, type ReceivedSpan } from './support/otlpReceiver.js';

const PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/project');
const SERVER = 2;
const CLIENT = 3;

function one(spans: ReceivedSpan[], what: string, match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found, `${what} among ${spans.map((s) => s.name).join(', ')}`).to.have.length(1);
  return found[0]!;
}

async function runStartedMetadata(db: pg.Pool, runId: string): Promise<Record<string, unknown>> {
  const { rows } = await db.query<{ metadata: Record<string, unknown> }>(`SELECT metadata FROM events WHERE stream_id = $1 AND type = 'run_started'`, [
    `run-${runId}`,
  ]);
  return rows[0]!.metadata;
}

describe('traces (OpenTelemetry over OTLP/HTTP)', function () {
  this.timeout(120_000);
  const receiver = new OtlpReceiver();
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  const pools: pg.Pool[] = [];
  let project: string;

  before(async () => {
    await receiver.start();
    await fake.start();
    await mcp.start();
    const tools = [
      'kind: Artifact',
      'metadata: {name: http_tools, version: "1", description: An MCP server over HTTP.}',
      'spec:',
      '  type: mcp',
      '  content:',
      `    url: ${mcp.url}`,
      '',
    ];
    project = copyProject(PROJECT, { 'artifacts/http_tools.yaml': tools.join('\n') });
  });
  after(async () => {
    await killAllServices();
    await Promise.all(pools.map((pool) => pool.end()));
    await receiver.stop();
    await fake.stop();
    await mcp.stop();
  });

  async function database(): Promise<{ url: string; db: pg.Pool }> {
    const url = await createTestDatabase();
    const db = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(db);
    return { url, db };
  }

  const traced = (extra: Record<string, string> = {}) => ({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_BSP_SCHEDULE_DELAY: '50',
    SVC_LLM_BASE_URL: fake.baseUrl,
    ...extra,
  });

  it('a run: HTTP request -> run -> steps -> APICall and MCP requests (traceparent sent) and the LLM call (GenAI attributes)', async () => {
    const api = new TracedApi();
    await api.start();
    try {
      const { url, db } = await database();
      const service = await ServiceProcess.start(url, project, traced());
      const { token } = await bootstrapAdmin(service.url);
      const key = `traced-${randomBytes(4).toString('hex')}`;
      fake.script(key, [{ content: 'Traced answer.', usage: { prompt_tokens: 12, completion_tokens: 5 } }]);
      const callerTrace = randomBytes(16).toString('hex');
      const callerSpan = randomBytes(8).toString('hex');
      const started = await call(service.url, 'POST', '/api/workflows/traced/runs', {
        token,
        json: { api: api.url, question: key },
        headers: { traceparent: `00-${callerTrace}-${callerSpan}-01` },
      });
      expect(started.status, JSON.stringify(started.body)).to.be.oneOf([200, 201]);
      const runId = String(started.headers.get('x-svc-run-id'));
      expect(started.body, 'the Response step answers').to.deep.equal({ answer: 'Traced answer.', pinged: 1, sum: 5 });

      await receiver.waitFor('the run span and the request span', (spans) => {
        const names = spans.filter((s) => s.traceId === callerTrace).map((s) => s.name);
        return names.includes('run traced') && names.includes('POST /api/workflows/:name/runs');
      });
      const spans = receiver.inTrace(callerTrace);
      const request = one(spans, 'the request span', (s) => s.kind === SERVER && s.name === 'POST /api/workflows/:name/runs');
      expect(request.parentSpanId, "the caller's traceparent is the request's parent").to.equal(callerSpan);
      expect(request.attributes).to.include({ 'http.request.method': 'POST', 'http.route': '/api/workflows/:name/runs' });
      expect(request.attributes['http.response.status_code']).to.equal(started.status);

      const run = one(spans, 'the run span', (s) => s.name === 'run traced');
      expect(run.parentSpanId).to.equal(request.spanId);
      expect(run.attributes).to.include({ 'svc.run.id': runId, 'svc.workflow': 'traced', 'svc.run.status': 'completed', 'svc.run.resumed': false });

      const steps = spans.filter((s) => s.name.startsWith('step '));
      expect(steps.map((s) => s.name).sort()).to.deep.equal(['step answer', 'step ask', 'step call', 'step tool']);
      for (const step of steps) expect(step.parentSpanId, step.name).to.equal(run.spanId);
      const callStep = one(steps, 'step call', (s) => s.name === 'step call');
      expect(callStep.attributes).to.include({
        'svc.workflow': 'traced',
        'svc.step.id': 'call',
        'svc.step.kind': 'APICall',
        'svc.step.signal': 'default',
        'svc.step.attempt': 1,
      });

      const outgoing = one(spans, 'the APICall request', (s) => s.kind === CLIENT && s.parentSpanId === callStep.spanId);
      expect(outgoing.attributes).to.include({ 'http.request.method': 'GET', 'url.full': `${api.url}/ping`, 'http.response.status_code': 200 });
      expect(api.requests).to.have.length(1);
      const seen = parseTraceparent(api.requests[0]!.traceparent);
      expect(seen, 'the called server saw the request span as its parent').to.deep.equal({ traceId: callerTrace, parentId: outgoing.spanId });

      const toolStep = one(steps, 'step tool', (s) => s.name === 'step tool');
      expect(toolStep.attributes).to.include({ 'svc.step.kind': 'MCP', 'svc.step.signal': 'default' });
      const toolCall = one(spans, 'the MCP tool call', (s) => s.name === 'tools/call add');
      expect(toolCall.parentSpanId).to.equal(toolStep.spanId);
      expect(toolCall.attributes).to.include({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'add' });
      const mcpCall = mcp.calls.find((c) => c.tool === 'add');
      const mcpSeen = parseTraceparent(String(mcpCall?.headers.traceparent));
      expect(mcpSeen.traceId, 'the MCP server saw the trace').to.equal(callerTrace);
      one(spans, "the MCP call's HTTP request", (s) => s.kind === CLIENT && s.spanId === mcpSeen.parentId && s.parentSpanId === toolCall.spanId);

      const askStep = one(steps, 'step ask', (s) => s.name === 'step ask');
      expect(askStep.attributes).to.include({ 'svc.step.kind': 'Agent', 'svc.step.id': 'ask' });
      const llm = one(spans, 'the LLM span', (s) => s.name === 'chat fake-model-1');
      expect(llm.kind).to.equal(CLIENT);
      expect(llm.parentSpanId).to.equal(askStep.spanId);
      expect(llm.attributes).to.include({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'fake-model-1',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 5,
      });
      const llmRequest = one(spans, "the model server's request", (s) => s.kind === CLIENT && s.parentSpanId === llm.spanId);
      expect(llmRequest.attributes).to.include({ 'http.request.method': 'POST', 'http.response.status_code': 200 });
      expect(String(llmRequest.attributes['url.full'])).to.match(/\/v1\/chat\/completions$/);

      const metadata = await runStartedMetadata(db, runId);
      expect(parseTraceparent(String(metadata.traceparent)), "run_started journals the run span's context").to.deep.equal({
        traceId: callerTrace,
        parentId: run.spanId,
      });
      expect(receiver.refused).to.deep.equal([]);
    } finally {
      await api.stop();
    }
  });

  it('a run SIGKILLed mid-step continues its trace on the process that takes it over', async () => {
    const api = new TracedApi({ path: '/slow', count: 1 });
    await api.start();
    try {
      const { url, db } = await database();
      const first = await ServiceProcess.start(url, project, traced());
      const { token } = await bootstrapAdmin(first.url);
      const started = await call(first.url, 'POST', '/api/workflows/held/runs?wait=false', { token, json: { api: api.url } });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      const runId = String(started.body.id);
      const calledOnce = await eventually(async () => api.requests.length === 1, 20_000, 20);
      expect(calledOnce.ok, 'the first process called the API').to.equal(true);
      const before = parseTraceparent(api.requests[0]!.traceparent);
      await first.kill();

      const second = await ServiceProcess.start(url, project, traced());
      const done = await eventually(
        async () => {
          const { rows } = await db.query<{ status: string }>('SELECT status FROM svc_runs WHERE id = $1', [runId]);
          return rows[0]?.status === 'completed';
        },
        30_000,
        100,
      );
      expect(done.ok, `the second process did not complete the run:\n${second.output}`).to.equal(true);

      expect(api.requests, 'the step ran again on the second process').to.have.length(2);
      const after = parseTraceparent(api.requests[1]!.traceparent);
      expect(after.traceId, "the second process's request is in the first one's trace").to.equal(before.traceId);
      await receiver.waitFor("the second process's run span", (spans) =>
        spans.some((s) => s.traceId === before.traceId && s.name === 'run held' && s.attributes['svc.run.resumed'] === true),
      );
      const spans = receiver.inTrace(before.traceId);
      const resumed = one(spans, 'the resumed run span', (s) => s.name === 'run held' && s.attributes['svc.run.resumed'] === true);
      expect(resumed.attributes).to.include({ 'svc.run.id': runId, 'svc.run.status': 'completed' });
      const metadata = await runStartedMetadata(db, runId);
      expect(resumed.parentSpanId, 'its parent is the context run_started journaled').to.equal(parseTraceparent(String(metadata.traceparent)).parentId);
      const slow = one(spans, 'the step span on the second process', (s) => s.name === 'step slow' && s.parentSpanId === resumed.spanId);
      expect(slow.attributes).to.include({ 'svc.step.kind': 'APICall', 'svc.step.signal': 'default' });
      one(spans, "the second process's APICall request", (s) => s.kind === CLIENT && s.spanId === after.parentId && s.parentSpanId === slow.spanId);
    } finally {
      await api.stop();
    }
  });

  it('a run waiting for a person, its process killed: the decision on another process continues its trace', async () => {
    const api = new TracedApi();
    await api.start();
    try {
      const { url } = await database();
      const first = await ServiceProcess.start(url, project, traced());
      const { token } = await bootstrapAdmin(first.url);
      const startTrace = randomBytes(16).toString('hex');
      const started = await call(first.url, 'POST', '/api/workflows/review/runs', {
        token,
        json: { api: api.url },
        headers: { traceparent: `00-${startTrace}-${randomBytes(8).toString('hex')}-01` },
      });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      const runId = String(started.headers.get('x-svc-run-id'));
      const approvalId = String(started.body.approval?.approval_id);
      await receiver.waitFor("the first process's run span, ended waiting", (spans) =>
        spans.some((s) => s.traceId === startTrace && s.name === 'run review' && s.attributes['svc.run.status'] === 'waiting_human'),
      );
      const asked = one(receiver.inTrace(startTrace), 'the first visit of the step', (s) => s.name === 'step approve');
      expect(asked.attributes).to.include({ 'svc.step.kind': 'HumanInTheLoop', 'svc.run.status': 'waiting_human' });
      await first.kill();

      const second = await ServiceProcess.start(url, project, traced());
      const decisionTrace = randomBytes(16).toString('hex');
      const decided = await call(second.url, 'POST', `/api/approvals/${approvalId}`, {
        token,
        json: { decision: 'approve' },
        headers: { traceparent: `00-${decisionTrace}-${randomBytes(8).toString('hex')}-01` },
      });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      await receiver.waitFor("the second process's run span", (spans) =>
        spans.some((s) => s.traceId === startTrace && s.name === 'run review' && s.attributes['svc.run.status'] === 'completed'),
      );
      const spans = receiver.inTrace(startTrace);
      const resumed = one(spans, 'the resumed run span', (s) => s.name === 'run review' && s.attributes['svc.run.status'] === 'completed');
      expect(resumed.attributes).to.include({ 'svc.run.id': runId, 'svc.run.resumed': true });
      await receiver.waitFor('the decision request span', (all) => all.some((s) => s.traceId === decisionTrace && s.kind === SERVER));
      const decision = one(receiver.inTrace(decisionTrace), 'the decision request', (s) => s.kind === SERVER);
      expect(decision.name).to.equal('POST /api/approvals/:id');
      expect(resumed.links, 'the run span links the request that resumed it').to.deep.include({ traceId: decisionTrace, spanId: decision.spanId });
      const approve = one(spans, 'the step span on the second process', (s) => s.name === 'step approve' && s.parentSpanId === resumed.spanId);
      expect(approve.attributes).to.include({ 'svc.step.signal': 'approve' });
      one(spans, 'the notify step', (s) => s.name === 'step notify' && s.parentSpanId === resumed.spanId);
      expect(
        api.requests.map((r) => parseTraceparent(r.traceparent).traceId),
        "the API call is in the run's trace",
      ).to.deep.equal([startTrace]);
    } finally {
      await api.stop();
    }
  });

  for (const [what, env] of [
    ['with no endpoint set', { OTEL_EXPORTER_OTLP_ENDPOINT: '' }],
    ['with OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }],
  ] as const) {
    it(`off ${what}: nothing is exported, no traceparent is sent or journaled`, async () => {
      // The traced processes of the tests before are gone: whatever the receiver gets from here on came from this one.
      await killAllServices();
      const api = new TracedApi();
      await api.start();
      try {
        const { url, db } = await database();
        const service = await ServiceProcess.start(url, project, {
          ...traced(),
          ...env,
          ...(what.startsWith('with no') ? { OTEL_EXPORTER_OTLP_ENDPOINT: '' } : {}),
        });
        const { token } = await bootstrapAdmin(service.url);
        const exportedBefore = receiver.spans.length;
        const callerTrace = randomBytes(16).toString('hex');
        const started = await call(service.url, 'POST', '/api/workflows/held/runs', {
          token,
          json: { api: api.url },
          headers: { traceparent: `00-${callerTrace}-${randomBytes(8).toString('hex')}-01` },
        });
        expect(started.status, JSON.stringify(started.body)).to.be.oneOf([200, 201]);
        expect(api.requests.map((r) => r.traceparent)).to.deep.equal([undefined]);
        expect(await runStartedMetadata(db, String(started.headers.get('x-svc-run-id')))).to.not.have.property('traceparent');
        // Well past the export interval a traced process uses here.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(receiver.spans.length).to.equal(exportedBefore);
        expect(receiver.inTrace(callerTrace)).to.deep.equal([]);
      } finally {
        await api.stop();
      }
    });
  }
});
