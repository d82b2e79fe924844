// Agent steps in completion mode and every reserved exit, against a scripted fake OpenAI server:
// what the model is sent (templates, artifact refs, steering), how outcomes route, and the guardrails.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { parseScrape } from '../support/prometheus.js';
import { journalOf, privateKeys } from '../support/runs.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { startAgentService, stepEnd } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

describe('Agent steps: completion mode and reserved exits', function () {
  this.timeout(30_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let service: Service;
  let token: string;
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    service = await startAgentService(fake, mcp);
    token = (await bootstrapAdmin(service.url)).token;
    api = client(service.url, token);
  });
  after(async () => {
    await service?.close();
    await fake.stop();
    await mcp.stop();
  });

  /** Triggers, checks no answer leaks engine-owned keys, and answers the result with the run's journal. */
  async function trigger(path: string, input: Record<string, unknown>) {
    const result = await api.post(path, input);
    expect(privateKeys(result.body), JSON.stringify(result.body)).to.deep.equal([]);
    const runId = result.headers.get('x-svc-run-id');
    expect(runId, JSON.stringify(result.body)).to.be.a('string');
    return { ...result, runId: runId!, journal: await journalOf(service.url, token, runId!) };
  }

  /** svc_llm_tokens_total of fake-model-1 in /metrics, by direction. */
  async function llmTokens(): Promise<{ input: number; output: number }> {
    const scraped = parseScrape(String((await api.get('/metrics')).body));
    const of = (direction: string) => scraped.value('svc_llm_tokens_total', { model: 'fake-model-1', direction });
    return { input: of('input'), output: of('output') };
  }

  /** A run that ended through a reserved exit routed to END: a 400 envelope naming the exit's reason. */
  function expectExit(run: Awaited<ReturnType<typeof trigger>>, stepId: string, signal: string, message: RegExp) {
    expect(run.status, JSON.stringify(run.body)).to.equal(400);
    expect(run.body).to.include({ success: false, status_code: 400 });
    expect(run.body.error.message).to.match(message);
    const end = stepEnd(run.journal, stepId);
    expect(end.payload.signal).to.equal(signal);
    expect(end.type).to.equal(signal === 'error' ? 'step_failed' : 'step_completed');
    expect(run.journal.at(-1).type).to.equal('run_failed');
  }

  describe('completion mode', () => {
    it('renders the system template, resolves artifact://name@version prompts, appends steering artifacts, and routes a text enum outcome into the `write` key', async () => {
      const key = 'printer-jam-4711';
      fake.script(key, [{ content: '  billing\n', usage: { prompt_tokens: 30, completion_tokens: 2 } }]);
      const tokensBefore = await llmTokens();
      const run = await trigger('/api/agents/classify', { message: `I was charged twice, ${key}`, team: 'payments' });
      expect(run.status, JSON.stringify(run.body)).to.equal(201);
      expect(run.body).to.deep.equal({ category: 'billing' });

      const [request, ...more] = fake.requestsFor(key);
      expect(more).to.have.length(0);
      expect(request!.model).to.equal('fake-model-1');
      expect(request!.messages).to.have.length(2);
      // The rendered system text first, then each steering artifact in the order listed.
      expect(request!.messages[0]!.role).to.equal('system');
      const parts = String(request!.messages[0]!.content)
        .split('\n\n')
        .map((p) => p.trim())
        .filter((p) => p.length > 0);
      expect(parts).to.deep.equal(['You sort messages for the payments team.', 'HOUSE-RULE: never promise refunds.', 'TONE-RULE: be brief.']);
      expect(request!.messages[1]!.role).to.equal('user');
      expect(String(request!.messages[1]!.content).trim()).to.equal(`Classify this message as bug, billing or other: I was charged twice, ${key}`);
      expect(request!.tools, 'completion mode offers no tools').to.deep.equal([]);
      expect(request!.body).to.not.have.property('response_format');

      const turns = run.journal.filter((e) => e.type === 'llm_turn');
      expect(turns).to.have.length(1);
      expect(turns[0].payload).to.include({ iteration: 1, tokens_used: 32, model: 'fake-model-1' });
      const tokensAfter = await llmTokens();
      expect({ input: tokensAfter.input - tokensBefore.input, output: tokensAfter.output - tokensBefore.output }).to.deep.equal({ input: 30, output: 2 });
      expect(turns[0].payload.response.content).to.equal('  billing\n');
      const end = stepEnd(run.journal, 'classify');
      expect(end.payload.signal).to.equal('billing');
      expect(end.payload.changes.set).to.deep.equal({ category: 'billing' });
      expect(end.payload.next).to.equal('answer');
      const decision = run.journal.find((e) => e.type === 'decision' && e.agent_id === 'classify');
      expect(decision, 'the agent outcome is journaled as a decision').to.not.equal(undefined);
      expect(decision.payload.decision).to.equal('billing');
      expect(
        run.journal.filter((e) => e.type === 'agent_progress'),
        'completion mode sends no loop progress',
      ).to.have.length(0);
    });

    it('with format json: asks for a JSON object, routes on its `outcome` field and writes the whole object', async () => {
      const key = 'json-verdict-0815';
      fake.script(key, [{ content: JSON.stringify({ outcome: 'reject', reason: 'spam' }) }]);
      const run = await trigger('/api/agents/classify-json', { message: key });
      expect(run.status, JSON.stringify(run.body)).to.equal(201);
      expect(run.body).to.deep.equal({ verdict: { outcome: 'reject', reason: 'spam' } });
      expect(fake.requestsFor(key)[0]!.body.response_format).to.deep.equal({ type: 'json_object' });
      expect(stepEnd(run.journal, 'judge').payload.signal).to.equal('reject');
    });
  });

  describe('reserved exits', () => {
    it('error: an outcome outside the enum', async () => {
      const key = 'not-in-enum-77';
      fake.script(key, [{ content: 'refund' }]);
      const run = await trigger('/api/agents/classify', { message: key, team: 'x' });
      expectExit(run, 'classify', 'error', /"refund" is not one of bug, billing, other/);
    });

    it('error: malformed JSON when the outcome format is json (and a JSON outcome outside the enum)', async () => {
      const key = 'malformed-json-12';
      fake.script(key, [{ content: '{"outcome": "accept", ' }]);
      const run = await trigger('/api/agents/classify-json', { message: key });
      expectExit(run, 'judge', 'error', /did not answer JSON/);

      const other = 'json-wrong-outcome-13';
      fake.script(other, [{ content: JSON.stringify({ outcome: 'maybe' }) }]);
      const wrong = await trigger('/api/agents/classify-json', { message: other });
      expectExit(wrong, 'judge', 'error', /"maybe" is not one of accept, reject/);
    });

    it('error: the model answers 500 on every retry (the SDK retries, then the step fails)', async () => {
      const key = 'model-down-500';
      fake.script(key, [{ status: 500 }, { status: 500 }, { status: 500 }]);
      const run = await trigger('/api/agents/ask', { question: key });
      expectExit(run, 'ask', 'error', /the model call failed/);
      expect(fake.requestsFor(key), 'one request and max_retries (2) retries').to.have.length(3);
      expect(run.journal.filter((e) => e.type === 'llm_turn')).to.have.length(0);
    });

    it('error: an answer slower than the AgentModel timeout (1 s, 1 retry) is given up on in bounded time; nothing is journaled as a turn', async () => {
      const key = 'model-too-slow-1s';
      // Both attempts would be answered only after 10 s: far past the 1 s timeout of `quick`.
      fake.script(key, [
        { content: 'too late', delayMs: 10_000 },
        { content: 'too late again', delayMs: 10_000 },
      ]);
      const started = Date.now();
      const run = await trigger('/api/agents/ask-quick', { question: key });
      const elapsed = Date.now() - started;
      expectExit(run, 'ask', 'error', /the model call failed: .*timed out/i);
      // timeout × (max_retries + 1) = 2 s: a lower bound, which load only makes safer.
      expect(elapsed, 'both attempts waited out their timeout').to.be.at.least(1900);
      // Bounded by the timeout, not by the slow answer: neither request had been answered when the run ended.
      const requests = fake.requestsFor(key);
      expect(
        requests.map((r) => [r.model, r.answered]),
        'one request and one retry, neither answered',
      ).to.deep.equal([
        ['fake-model-quick', false],
        ['fake-model-quick', false],
      ]);
      expect(run.journal.filter((e) => e.type === 'llm_turn')).to.have.length(0);
    });

    it('a 500 followed by an answer is retried transparently', async () => {
      const key = 'model-flaky-500';
      fake.script(key, [{ status: 500 }, { content: 'fine now' }]);
      const run = await trigger('/api/agents/ask', { question: key });
      expect(run.status, JSON.stringify(run.body)).to.equal(201);
      expect(run.body).to.deep.equal({ answer: 'fine now' });
      expect(fake.requestsFor(key)).to.have.length(2);
      expect(
        run.journal.filter((e) => e.type === 'llm_turn'),
        'only the answer is a journaled turn',
      ).to.have.length(1);
    });

    it('guardrail_violation on input: regex_deny and max_chars stop the step before the model is asked', async () => {
      const key = 'ssn-input-5';
      fake.script(key, [{ content: 'should not be asked' }]);
      const denied = await trigger('/api/agents/ask', { question: `${key}: my number is 123-45-6789` });
      expectExit(denied, 'ask', 'guardrail_violation', /input guardrail: input_rules: matches a denied pattern/);
      const long = await trigger('/api/agents/ask', { question: `${key} ${'x'.repeat(200)}` });
      expectExit(long, 'ask', 'guardrail_violation', /input guardrail: input_rules: longer than 200 characters/);
      expect(fake.requestsFor(key), 'the model is never asked').to.have.length(0);
      expect(fake.remaining(key)).to.equal(1);
      // A prompt of exactly 200 characters passes.
      const exact = `${key} `.padEnd(200, 'y');
      const passing = await trigger('/api/agents/ask', { question: exact });
      expect(passing.status, JSON.stringify(passing.body)).to.equal(201);
      expect(passing.body).to.deep.equal({ answer: 'should not be asked' });
    });

    it('guardrail_violation on output: regex_deny and max_chars on the answer', async () => {
      const key = 'output-guard-6';
      fake.script(key, [{ content: 'the key is sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ' }, { content: 'z'.repeat(61) }, { content: 'z'.repeat(60) }]);
      const leaked = await trigger('/api/agents/ask', { question: key });
      expectExit(leaked, 'ask', 'guardrail_violation', /output guardrail: output_rules: matches a denied pattern/);
      expect(leaked.body.data, 'the refused answer is not written').to.deep.equal({ question: key });
      const long = await trigger('/api/agents/ask', { question: key });
      expectExit(long, 'ask', 'guardrail_violation', /output guardrail: output_rules: longer than 60 characters/);
      const fits = await trigger('/api/agents/ask', { question: key });
      expect(fits.status, JSON.stringify(fits.body)).to.equal(201);
      expect(fits.body).to.deep.equal({ answer: 'z'.repeat(60) });
    });

    it('guardrail_violation on output: json_schema checks a JSON answer', async () => {
      const key = 'json-schema-guard-8';
      fake.script(key, [
        { content: JSON.stringify({ outcome: 'ok', reason: 'r'.repeat(41) }) },
        { content: JSON.stringify({ outcome: 'ok' }) },
        { content: JSON.stringify({ outcome: 'ok', reason: 'short' }) },
      ]);
      const tooLong = await trigger('/api/agents/verdict', { message: key });
      expectExit(tooLong, 'verdict', 'guardrail_violation', /output guardrail: json_shape: .*reason/);
      const missing = await trigger('/api/agents/verdict', { message: key });
      expectExit(missing, 'verdict', 'guardrail_violation', /output guardrail: json_shape: .*reason/);
      const valid = await trigger('/api/agents/verdict', { message: key });
      expect(valid.status, JSON.stringify(valid.body)).to.equal(201);
      expect(valid.body).to.deep.equal({ message: key, verdict: { outcome: 'ok', reason: 'short' } });
    });

    it('guardrail_violation on tool arguments: regex_deny, max_chars and json_schema, before the tool runs', async () => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['tool-guard-regex', { query: 'x; DROP TABLE users' }, /tool guardrail: tool_rules: matches a denied pattern/],
        ['tool-guard-schema', { query: 'q'.repeat(41) }, /tool guardrail: tool_rules: .*query/],
        ['tool-guard-chars', { query: 'ok', padding: 'p'.repeat(300) }, /tool guardrail: tool_rules: longer than 300 characters/],
      ];
      for (const [key, args, message] of cases) {
        fake.script(key, [{ toolCalls: [{ name: 'lookup', args }] }]);
        const run = await trigger('/api/agents/helper', { question: key });
        expectExit(run, 'agent', 'guardrail_violation', message);
        expect(
          run.journal.filter((e) => e.type === 'tool_call' || e.type === 'tool_result'),
          `${key}: the tool never ran`,
        ).to.have.length(0);
        expect(fake.requestsFor(key)).to.have.length(1);
      }
    });

    it('budget_exceeded: the tokens of a turn pass token_budget; the tool it asked for never runs', async () => {
      const key = 'budget-blown-9';
      fake.script(key, [{ toolCalls: [{ name: 'lookup', args: { query: 'a' } }], usage: { prompt_tokens: 5000, completion_tokens: 1 } }]);
      const run = await trigger('/api/agents/helper', { question: key });
      expectExit(run, 'agent', 'budget_exceeded', /token budget 5000 exceeded \(5001\)/);
      expect(run.journal.find((e) => e.type === 'llm_turn').payload.tokens_used).to.equal(5001);
      expect(run.journal.filter((e) => e.type === 'tool_call')).to.have.length(0);
      expect(fake.requestsFor(key)).to.have.length(1);
    });

    it('max_iterations: a model that never stops calling tools ends after max_iterations (3) turns', async () => {
      const key = 'endless-loop-10';
      const call = { toolCalls: [{ name: 'lookup', args: { query: 'again' } }] };
      fake.script(key, [call, call, call, call]);
      const run = await trigger('/api/agents/helper', { question: key });
      expectExit(run, 'agent', 'max_iterations', /no answer after 3 iterations/);
      expect(fake.requestsFor(key), 'no fourth model call').to.have.length(3);
      expect(run.journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.iteration)).to.deep.equal([1, 2, 3]);
      expect(run.journal.filter((e) => e.type === 'tool_result')).to.have.length(3);
    });
  });
});
