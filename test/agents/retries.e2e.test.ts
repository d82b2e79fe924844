// Step retries (BEYOND 1.1) on the kinds the durable-time tests do not drive: an MCP tool that fails
// then answers, an Agent whose model call answers 500 then succeeds, a ModelOp whose model is disabled
// then enabled again; each journals step_attempt_failed per failed attempt and completes, and exhausted
// or non-retryable failures take the step's error route.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { journalOf, waitForEvent, waitForStatus } from '../support/runs.js';
import { copyProject } from '../support/projects.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { agentProject, startAgentService } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

const RETRY = 'retry: {max_attempts: 3, initial_interval: 100ms, backoff: exponential, multiplier: 2, non_retryable: [ValidationError]}';

/** The agent project plus three workflows whose one outside step retries, a model without SDK retries, and a model file. */
function retryProject(mcpUrl: string): string {
  const dir = copyProject(agentProject(mcpUrl), {
    // The SDK's own retries off: each 500 is one failed attempt of the step.
    'llms/brittle.yaml':
      'kind: AgentModel\nmetadata: {name: brittle}\nspec: {provider: openai, base_url: "${SVC_LLM_BASE_URL}", api_key: k, model: fake-model-1, timeout: 20, max_retries: 0}\n',
    'workflows/retry_mcp.yaml': workflow('retry_mcp', [
      '  trigger:',
      '    input_schema: [{name: key, type: string, required: true}, {name: fail_times, type: integer, required: true}]',
      '  steps:',
      '    - id: call',
      '      kind: MCP',
      '      mcp: {server: artifact://http_tools@1, tool: flaky, arguments: {key: "{{ key }}", fail_times: "{{ fail_times }}"}, timeout_ms: 10000}',
      '      response: {extract: [{path: calls, as: calls}]}',
      `      ${RETRY}`,
      '      routes: {default: done, error: gave_up}',
      '    - {id: done, kind: Response, mapping: {calls: calls}, routes: {default: END}}',
      '    - {id: gave_up, kind: Response, status_code: 502, mapping: {error: _last_error.message}}',
    ]),
    'workflows/retry_agent.yaml': workflow('retry_agent', [
      '  trigger:',
      '    input_schema: [{name: question, type: text, required: true}]',
      '  steps:',
      '    - id: ask',
      '      kind: Agent',
      '      mode: completion',
      '      agent: {model: brittle, system: You answer questions., prompt: "{{ question }}"}',
      `      ${RETRY}`,
      '      routes: {default: done, error: gave_up}',
      '    - {id: done, kind: Response, mapping: {answer: ask}, routes: {default: END}}',
      '    - {id: gave_up, kind: Response, status_code: 502, mapping: {error: _last_error.message}}',
    ]),
    'workflows/retry_modelop.yaml': workflow('retry_modelop', [
      '  context: [Tally]',
      '  trigger:',
      '    input_schema: [{name: label, type: string, required: true}, {name: size, type: any}]',
      '  steps:',
      '    - id: save',
      '      kind: ModelOp',
      '      model: Tally',
      '      operation: create',
      '      payload: {label: "{{ label }}", size: "{{ size }}"}',
      '      output: tally',
      '      retry: {max_attempts: 60, initial_interval: 200ms, backoff: fixed, non_retryable: [ValidationError]}',
      '      routes: {default: done, error: gave_up}',
      '    - {id: done, kind: Response, mapping: {label: tally.label}, routes: {default: END}}',
      '    - {id: gave_up, kind: Response, status_code: 502, mapping: {error: _last_error.message}}',
    ]),
  });
  mkdirSync(path.join(dir, 'models'), { recursive: true });
  writeFileSync(
    path.join(dir, 'models/tally.yaml'),
    [
      'kind: ModelDefinition',
      'metadata: {name: Tally, schema_version: v1}',
      'spec:',
      '  tablename: retry_tallies',
      '  datasource: primary',
      '  fields:',
      '    - {name: id, type: uuid, primary_key: true}',
      '    - {name: label, type: string, required: true}',
      '    - {name: size, type: integer}',
      '',
    ].join('\n'),
  );
  return dir;
}

function workflow(name: string, spec: string[]): string {
  return [`kind: Workflow`, `metadata: {name: ${name}, schema_version: v1, description: A retried ${name.slice(6)} step.}`, 'spec:', ...spec, ''].join('\n');
}

describe('step retries on MCP, Agent and ModelOp steps', function () {
  this.timeout(60_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let service: Service;
  let token: string;
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    service = await startAgentService(fake, mcp, retryProject);
    token = (await bootstrapAdmin(service.url)).token;
    api = client(service.url, token);
  });
  after(async () => {
    await service?.close();
    await fake.stop();
    await mcp.stop();
  });

  const run = (workflowName: string, input: Record<string, unknown>) => api.post(`/api/workflows/${workflowName}/runs`, input);
  const journal = async (result: { headers: Headers }) => journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
  const failuresOf = (events: any[], stepId: string) => events.filter((e) => e.type === 'step_attempt_failed' && e.agent_id === stepId);

  describe('MCP', () => {
    it('a tool that fails twice then answers: two journaled failed attempts (McpToolError), the run completes', async () => {
      const result = await run('retry_mcp', { key: 'twice', fail_times: 2 });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body).to.deep.equal({ calls: 3 });
      const events = await journal(result);
      const failures = failuresOf(events, 'call');
      expect(failures.map((e) => e.payload.attempt)).to.deep.equal([1, 2]);
      for (const failure of failures) {
        expect(failure.payload.error).to.include({ name: 'McpToolError', message: 'MCP flaky answered with an error' });
        expect(Date.parse(failure.payload.next_attempt_at)).to.be.greaterThan(0);
      }
      expect(events.filter((e) => e.type === 'step_completed' && e.agent_id === 'call')).to.have.length(1);
      expect(events.at(-1).type).to.equal('run_completed');
      expect(mcp.calls.filter((c) => c.tool === 'flaky' && c.args.key === 'twice')).to.have.length(3);
    });

    it('exhausted attempts take the error route with the last error', async () => {
      const result = await run('retry_mcp', { key: 'always', fail_times: 100 });
      expect(result.status, JSON.stringify(result.body)).to.equal(502);
      expect(result.body.error).to.equal('MCP flaky answered with an error');
      const events = await journal(result);
      expect(failuresOf(events, 'call').map((e) => e.payload.attempt)).to.deep.equal([1, 2]);
      const failed = events.filter((e) => e.type === 'step_failed' && e.agent_id === 'call');
      expect(failed).to.have.length(1);
      expect(failed[0].payload.signal).to.equal('error');
      expect(events.some((e) => e.type === 'step_completed' && e.agent_id === 'gave_up')).to.equal(true);
      expect(mcp.calls.filter((c) => c.tool === 'flaky' && c.args.key === 'always')).to.have.length(3);
    });
  });

  describe('Agent', () => {
    it('a model call answered 500 twice then 200: two journaled failed attempts, the run completes with the answer', async () => {
      fake.script('RETRY-AGENT-OK', [{ status: 500 }, { status: 500 }, { content: 'third time lucky' }]);
      const result = await run('retry_agent', { question: 'RETRY-AGENT-OK: how many tries?' });
      expect(result.status, JSON.stringify(result.body)).to.equal(201);
      expect(result.body).to.deep.equal({ answer: 'third time lucky' });
      expect(fake.requestsFor('RETRY-AGENT-OK'), 'one model request per attempt (the SDK retries nothing)').to.have.length(3);
      const events = await journal(result);
      const failures = failuresOf(events, 'ask');
      expect(failures.map((e) => e.payload.attempt)).to.deep.equal([1, 2]);
      for (const failure of failures) expect(failure.payload.error.message).to.match(/^the model call failed: 500/);
      // Each attempt opens the step afresh; the one llm_turn is the successful attempt's.
      expect(events.filter((e) => e.type === 'step_started' && e.agent_id === 'ask')).to.have.length(3);
      expect(events.filter((e) => e.type === 'llm_turn')).to.have.length(1);
      expect(events.at(-1).type).to.equal('run_completed');
    });

    it('a model that keeps failing exhausts the attempts and takes the error route', async () => {
      fake.script('RETRY-AGENT-DOWN', [{ status: 500 }, { status: 500 }, { status: 500 }]);
      const result = await run('retry_agent', { question: 'RETRY-AGENT-DOWN: anyone there?' });
      expect(result.status, JSON.stringify(result.body)).to.equal(502);
      expect(result.body.error).to.match(/^the model call failed: 500/);
      const events = await journal(result);
      expect(failuresOf(events, 'ask').map((e) => e.payload.attempt)).to.deep.equal([1, 2]);
      expect(events.filter((e) => e.type === 'step_failed' && e.agent_id === 'ask')).to.have.length(1);
      expect(fake.remaining('RETRY-AGENT-DOWN')).to.equal(0);
    });
  });

  describe('ModelOp', () => {
    it('a create while its model is disabled fails and is retried; once the model is enabled again the run completes', async () => {
      const off = await api.patch('/admin/models/Tally/v1/toggle');
      expect(off.status, JSON.stringify(off.body)).to.equal(200);
      expect(off.body.enabled).to.equal(false);
      const started = await api.post('/api/workflows/retry_modelop/runs?wait=false', { label: 'late' });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      const runId = started.body.id as string;
      await waitForEvent(service.url, token, runId, 'step_attempt_failed', (e) => e.payload.attempt === 2, 20_000);
      const on = await api.patch('/admin/models/Tally/v1/toggle');
      expect(on.body.enabled).to.equal(true);
      const done = await waitForStatus(service.url, token, runId, ['completed', 'failed'], 30_000);
      expect(done.status, JSON.stringify(done)).to.equal('completed');
      expect(done.output).to.deep.equal({ label: 'late' });
      const events = await journalOf(service.url, token, runId);
      const failures = failuresOf(events, 'save');
      expect(failures.length).to.be.at.least(2);
      expect(failures.map((e) => e.payload.attempt)).to.deep.equal(failures.map((_, i) => i + 1));
      for (const failure of failures) expect(failure.payload.error.message).to.equal('model Tally is not enabled');
      const completed = events.filter((e) => e.type === 'step_completed' && e.agent_id === 'save');
      expect(completed).to.have.length(1);
      expect(completed[0].payload).to.include({ model: 'Tally', operation: 'create' });
    });

    it('an invalid payload (ValidationError, non-retryable) fails at once: no failed attempt, the error route', async () => {
      const result = await run('retry_modelop', { label: 'bad', size: 'not a number' });
      expect(result.status, JSON.stringify(result.body)).to.equal(502);
      expect(result.body.error).to.equal('payload is invalid');
      const events = await journal(result);
      expect(failuresOf(events, 'save')).to.deep.equal([]);
      expect(events.filter((e) => e.type === 'step_failed' && e.agent_id === 'save')).to.have.length(1);
    });
  });
});
