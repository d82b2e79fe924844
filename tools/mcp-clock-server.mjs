// An example MCP server (stdio) with two tools, `now` and `add`, built with the MCP SDK.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'clock', version: '1.0.0' });
server.registerTool('now', { description: 'The current time (ISO 8601, UTC)', inputSchema: {} }, async () => {
  const now = new Date().toISOString();
  return { content: [{ type: 'text', text: JSON.stringify({ now }) }], structuredContent: { now } };
});
server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
  content: [{ type: 'text', text: String(a + b) }],
  structuredContent: { sum: a + b },
}));
await server.connect(new StdioServerTransport());
