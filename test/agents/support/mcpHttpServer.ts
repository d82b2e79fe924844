// A real MCP server over Streamable HTTP (McpServer + StreamableHTTPServerTransport, stateless) on
// 127.0.0.1:0, with the same tools as the stdio fixture: add, echo, sleep (slow), explode (errors); and
// flaky, which fails its first `fail_times` calls per key (a transient fault for step retries).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export class McpHttpServer {
  /** Tool names in call order. */
  readonly calls: { tool: string; args: Record<string, unknown>; headers: Record<string, unknown> }[] = [];
  private server: Server | undefined;
  /** Calls of the flaky tool per key, across requests (each request builds a fresh McpServer). */
  private readonly flakyCalls = new Map<string, number>();
  url = '';

  private build(headers: Record<string, unknown>): McpServer {
    const server = new McpServer({ name: 'agent-test-tools-http', version: '1.0.0' });
    const record = (tool: string, args: Record<string, unknown>) => this.calls.push({ tool, args, headers });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
      record('add', { a, b });
      return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b, via: 'http' } };
    });
    server.registerTool('echo', { description: 'Echoes its text as JSON text', inputSchema: { text: z.string() } }, async ({ text }) => {
      record('echo', { text });
      return { content: [{ type: 'text', text: JSON.stringify({ echoed: text, via: 'http' }) }] };
    });
    server.registerTool('sleep', { description: 'Answers after ms milliseconds', inputSchema: { ms: z.number() } }, async ({ ms }, { signal }) => {
      record('sleep', { ms });
      // A caller that gave up closed the request: stop sleeping, no timer outlives the test.
      await sleep(ms, undefined, { signal }).catch(() => undefined);
      return { content: [{ type: 'text', text: 'woke up' }] };
    });
    server.registerTool('explode', { description: 'Always fails', inputSchema: { reason: z.string() } }, async ({ reason }) => {
      record('explode', { reason });
      throw new Error(`exploded: ${reason}`);
    });
    server.registerTool(
      'flaky',
      { description: 'Fails its first fail_times calls per key, then answers', inputSchema: { key: z.string(), fail_times: z.number() } },
      async ({ key, fail_times: failTimes }) => {
        record('flaky', { key, fail_times: failTimes });
        const call = (this.flakyCalls.get(key) ?? 0) + 1;
        this.flakyCalls.set(key, call);
        if (call <= failTimes) throw new Error(`flaky ${key}: call ${call} failed`);
        return { content: [{ type: 'text', text: String(call) }], structuredContent: { calls: call } };
      },
    );
    return server;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (req.url !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      if (req.method !== 'POST') {
        // Stateless: no standalone SSE stream and no sessions to delete.
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      const mcp = this.build({ ...req.headers });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void mcp.close();
      });
      void mcp
        .connect(transport)
        .then(() => transport.handleRequest(req, res))
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end();
        });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
