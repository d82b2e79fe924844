// MCP: calls a tool on the server an `mcp` artifact describes; the result goes into the context.
import { callMcpTool, type McpServerConfig, type McpToolResult } from '../../../agents/mcpClient.js';
import type { Artifact } from '../../../artifacts/artifact.js';
import { isConnectionLoss } from '../../../db/connectionLoss.js';
import type { JsonObject } from '../../../kernel/json.js';
import { outboundRefusalIn } from '../../../outbound/fetch.js';
import { readPath, render } from '../../../workflows/template.js';
import { errorNameOf, errorOutcome, type StepExecutor } from './types.js';

const DEFAULT_TIMEOUT_MS = 30_000;

export const executeMcp: StepExecutor = async ({ step, context, principal }, deps) => {
  const config = (step.config.mcp ?? {}) as JsonObject;
  const tool = String(config.tool ?? '');
  const args = render(config.arguments ?? {}, context) as JsonObject;
  const timeoutMs = Math.max(1, Number(config.timeout_ms ?? DEFAULT_TIMEOUT_MS));
  const request: JsonObject = { server: String(config.server ?? ''), tool, arguments: args };
  const recorded = deps.recorded?.get(step.id);
  const failed = (error: unknown) => ({
    ...errorOutcome(`MCP ${tool} failed: ${(error as Error).message}`, { step: step.id, name: errorNameOf(error) }),
    report: { request },
  });
  let result: McpToolResult;
  if (recorded?.result) {
    result = recorded.result;
  } else {
    if (!deps.artifacts) return errorOutcome('no artifact catalog to resolve the MCP server', { step: step.id });
    let server: Artifact | undefined;
    try {
      // The run's tenant: another tenant's upload of the name is never reached.
      server = await deps.artifacts.resolve(principal?.tenant ?? null, config.server, 'mcp');
    } catch (error) {
      // The catalog reads the database: its going away is no failure of the step (the run is resumed).
      if (isConnectionLoss(error)) throw error;
      return failed(error);
    }
    if (!server) return errorOutcome(`mcp.server must be an artifact:// reference to an mcp artifact`, { step: step.id });
    try {
      result = await callMcpTool(server.content as McpServerConfig, tool, args, { timeoutMs, fetch: deps.fetch, cwd: deps.projectDir });
    } catch (error) {
      return failed(outboundRefusalIn(error) ?? error);
    }
  }
  const report = { request, result };
  if (result.is_error) return { ...errorOutcome(`MCP ${tool} answered with an error`, { step: step.id, name: 'McpToolError', result: result.value }), report };
  const response = (step.config.response ?? {}) as { output_key?: string; extract?: { path: string; as: string }[] };
  const set: JsonObject = {};
  if (response.output_key) set[response.output_key] = result.value;
  for (const { path, as } of response.extract ?? []) set[as] = readPath(result.value, path) ?? null;
  if (!response.output_key && !response.extract) set[step.id] = result.value;
  return { signal: 'default', changes: { set, unset: [] }, report };
};
