// MCP steps against real MCP SDK servers over stdio (a child process) and Streamable HTTP: results into
// the context (output_key, extract), a timeout and a tool error as the `error` signal, `_last_error` kept inside.
import { realpathSync } from 'node:fs';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, client } from '../support/http.js';
import { journalOf, privateKeys } from '../support/runs.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { startAgentService, stepEnd } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

describe('MCP steps over stdio and Streamable HTTP', function () {
  this.timeout(30_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let service: Service;
  let projectDir: string;
  let token: string;
  let api: ReturnType<typeof client>;

  before(async function () {
    this.timeout(60_000);
    service = await startAgentService(fake, mcp);
    projectDir = service.kernel.settings.projectDir;
    token = (await bootstrapAdmin(service.url)).token;
    api = client(service.url, token);
  });
  after(async () => {
    await service?.close();
    await fake.stop();
    await mcp.stop();
  });

  async function trigger(transport: string, input: Record<string, unknown>) {
    const result = await api.post(`/api/agents/mcp-${transport}`, input);
    expect(privateKeys(result.body), `the answer leaks engine-owned keys: ${JSON.stringify(result.body)}`).to.deep.equal([]);
    const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
    expect(privateKeys(journal), 'the journal as served leaks engine-owned keys').to.deep.equal([]);
    return { ...result, journal };
  }

  it('stdio: the server starts in the project folder, so project-relative arguments resolve', async () => {
    const run = await trigger('stdio', { op: 'where' });
    expect(run.status, JSON.stringify(run.body)).to.equal(201);
    expect(realpathSync(run.body.raw.cwd)).to.equal(realpathSync(projectDir));
  });

  for (const transport of ['stdio', 'http']) {
    describe(transport, () => {
      it('puts the tool result into the context (output_key and extract) and journals request and result', async () => {
        const callsBefore = mcp.calls.length;
        const run = await trigger(transport, { op: 'add', a: 2, b: 3.5 });
        expect(run.status, JSON.stringify(run.body)).to.equal(201);
        expect(run.body).to.deep.equal({ sum: 5.5, via: transport, raw: { sum: 5.5, via: transport } });
        const end = stepEnd(run.journal, 'add');
        expect(end.payload.signal).to.equal('default');
        expect(end.payload.request).to.deep.equal({ server: `artifact://${transport}_tools@1`, tool: 'add', arguments: { a: 2, b: 3.5 } });
        expect(end.payload.result).to.include({ is_error: false });
        expect(end.payload.result.value).to.deep.equal({ sum: 5.5, via: transport });
        const httpCalls = mcp.calls.slice(callsBefore);
        if (transport === 'http') {
          expect(httpCalls.map((c) => [c.tool, c.args])).to.deep.equal([['add', { a: 2, b: 3.5 }]]);
          expect(httpCalls[0]!.headers['x-test-header'], 'the artifact headers are sent').to.equal('agents');
        } else {
          expect(httpCalls, 'the stdio artifact never reaches the HTTP server').to.have.length(0);
        }
      });

      it('a tool slower than timeout_ms ends the step with the error signal, quickly, without leaking _last_error', async () => {
        // The tool sleeps a minute, longer than this test may take: an answer at all means timeout_ms (400) bounded the call.
        const run = await trigger(transport, { op: 'slow' });
        expect(run.status, JSON.stringify(run.body)).to.equal(400);
        expect(run.body).to.include({ success: false, status_code: 400 });
        expect(run.body.error.message).to.match(/MCP sleep failed: .*time/i);
        expect(run.body.data).to.deep.equal({ op: 'slow' });
        const end = stepEnd(run.journal, 'slow');
        expect(end.type).to.equal('step_failed');
        expect(end.payload.signal).to.equal('error');
        expect(end.payload.changes.set).to.deep.equal({});
      });

      it('a tool that throws on the server ends the step with the error signal', async () => {
        const run = await trigger(transport, { op: 'fail' });
        expect(run.status, JSON.stringify(run.body)).to.equal(400);
        expect(run.body.error.message).to.equal('MCP explode answered with an error');
        const end = stepEnd(run.journal, 'fail');
        expect(end.type).to.equal('step_failed');
        expect(end.payload.signal).to.equal('error');
        expect(end.payload.result.is_error).to.equal(true);
        expect(JSON.stringify(end.payload.result.content)).to.include('exploded: boom');
        expect(
          run.journal.filter((e) => e.type === 'step_started' && e.agent_id === 'answer'),
          'the error route ends the run',
        ).to.have.length(0);
      });
    });
  }
});
