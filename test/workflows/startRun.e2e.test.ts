// One run starter behind every transport (HTTP triggers, gRPC-Web, MCP): a workflow's input validator
// is compiled once, whichever transport starts its runs, and an MCP call answered before its run ends
// names a run the journal holds, as an HTTP trigger's 202 does.
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { runOverGrpcWeb } from '../../src/client/grpc.js';
import { ajv } from '../../src/kernel/validation.js';
import type { Service } from '../../src/main.js';
import { Gates, STREAMS_PROJECT } from '../support/heldRuns.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

/** Short: a held run outlives it, and the call answers with the run pending. */
const SYNC_TIMEOUT_MS = 300;

describe('starting runs: one starter for HTTP, gRPC-Web and MCP', function () {
  this.timeout(30_000);
  const gates = new Gates();
  let service: Service;
  let admin: Admin;
  let mcp: McpClient;

  before(async () => {
    service = await startTestService({ projectDir: STREAMS_PROJECT, env: { SVC_SYNC_TIMEOUT_MS: String(SYNC_TIMEOUT_MS) } });
    admin = await bootstrapAdmin(service.url);
    mcp = new McpClient({ name: 'start-run-tests', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin.token}` } } }),
    );
  });
  after(async () => {
    gates.releaseAll();
    await mcp?.close();
    await service?.close();
    gates.remove();
  });

  it('compiles a workflow version’s input validator once, whichever transport starts its runs', async () => {
    const open = gates.next();
    gates.release(open);
    // Counted on the service's own ajv (same process): compilations of the `gated` input schema.
    const compiled: unknown[] = [];
    const compile = ajv.compile.bind(ajv);
    ajv.compile = ((schema: Parameters<typeof ajv.compile>[0]) => {
      if (JSON.stringify(schema).includes('"gate"')) compiled.push(schema);
      return compile(schema);
    }) as typeof ajv.compile;
    try {
      for (let round = 0; round < 2; round += 1) {
        const http = await call(service.url, 'POST', '/api/gated?wait=false', { token: admin.token, json: { gate: open } });
        expect(http.status, JSON.stringify(http.body)).to.equal(202);
        for await (const { frame } of runOverGrpcWeb(service.url, 'gated', { gate: open }, admin.token)) if (frame.event_type !== 'step') break;
        const tool = await mcp.callTool({ name: 'gated', arguments: { gate: open } });
        expect(tool.isError ?? false, JSON.stringify(tool)).to.equal(false);
      }
      // The validator still validates, on every transport.
      expect((await call(service.url, 'POST', '/api/gated', { token: admin.token, json: {} })).status).to.equal(422);
      const refused = await mcp.callTool({ name: 'gated', arguments: {} });
      expect(refused.isError).to.equal(true);
    } finally {
      ajv.compile = compile;
    }
    expect(compiled, 'compilations of the gated input schema').to.have.length(1);
  });

  it('MCP: a run still in its first step at the sync timeout is made durable, and the answer names it while it runs', async () => {
    const gate = gates.next();
    // Without the run made durable, the answer would wait for the first journal entry: after the gate opens.
    const result = await mcp.callTool({ name: 'held_first', arguments: { gate } });
    expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
    const pending = result.structuredContent as { run_id: string; status: string; approval: unknown; body: unknown };
    expect(pending).to.include({ approval: null, body: null });
    expect(pending.status).to.be.oneOf(['queued', 'running']);
    const run = await call(service.url, 'GET', `/api/runs/${pending.run_id}`, { token: admin.token });
    expect(run.status, 'the run the answer names exists').to.equal(200);
    expect(run.body.status).to.be.oneOf(['queued', 'running']);
    gates.release(gate);
  });
});
