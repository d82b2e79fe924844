// Calling a tool on an MCP server (Streamable HTTP or stdio) with the SDK's client, bounded in time.
import { SpanKind } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { SERVICE_VERSION } from '../kernel/version.js';
import type { OutboundFetch } from '../outbound/fetch.js';
import { inSpan, svcTracer, tracingEnabled } from '../tracing/tracer.js';

/** The content of an `mcp` artifact. */
export interface McpServerConfig {
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}

export interface McpToolResult extends JsonObject {
  is_error: boolean;
  /** structuredContent when the server sent it, else the text content parsed as JSON when it is JSON, else the text. */
  value: JsonValue;
  content: JsonValue;
}

interface CallOptions {
  timeoutMs: number;
  fetch: OutboundFetch;
  cwd?: string | undefined;
}

/**
 * `fetch` carries every HTTP request to the server (the destination policy); `cwd` is where a stdio
 * server starts. With tracing on, the call is a `tools/call <tool>` span (its HTTP requests its children).
 */
export async function callMcpTool(server: McpServerConfig, tool: string, args: JsonObject, options: CallOptions): Promise<McpToolResult> {
  if (!tracingEnabled()) return callTool(server, tool, args, options);
  const span = svcTracer().startSpan(`tools/call ${tool}`, {
    kind: SpanKind.CLIENT,
    attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool },
  });
  return inSpan(span, async () => {
    const result = await callTool(server, tool, args, options);
    if (result.is_error) span.setAttribute('error.type', 'tool_error');
    return result;
  });
}

async function callTool(server: McpServerConfig, tool: string, args: JsonObject, options: CallOptions): Promise<McpToolResult> {
  const { timeoutMs, cwd } = options;
  const client = new Client({ name: 'svc', version: SERVICE_VERSION });
  const transport = server.url
    ? new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} }, fetch: options.fetch })
    : new StdioClientTransport({
        command: server.command ?? '',
        args: server.args ?? [],
        env: { ...minimalEnvironment(), ...(server.env ?? {}) },
        stderr: 'ignore',
        ...(cwd ? { cwd } : {}),
      });
  try {
    await client.connect(transport, { timeout: timeoutMs });
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs });
    const content = (result.content ?? []) as { type: string; text?: string }[];
    const text = content
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join('\n');
    let value: JsonValue = (result.structuredContent as JsonValue | undefined) ?? text;
    if (result.structuredContent === undefined) {
      try {
        value = JSON.parse(text) as JsonValue;
      } catch {
        value = text;
      }
    }
    return { is_error: result.isError === true, value, content: content as unknown as JsonValue };
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** A child MCP server gets PATH and HOME, not our secrets. */
function minimalEnvironment(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'NODE_OPTIONS'];
  return Object.fromEntries(keep.flatMap((key) => (process.env[key] ? [[key, process.env[key]!]] : [])));
}
