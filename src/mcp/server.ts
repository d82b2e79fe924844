// /mcp: workflows exported as MCP tools (Streamable HTTP, stateless), run with the caller's identity.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Router } from 'express';
import type { Authenticator } from '../http/authenticator.js';
import { isAllowed, type Principal } from '../kernel/access.js';
import { workflowGate } from '../runs/trigger/gate.js';
import { inputSchemaOf, type RunStarter, type SettledRun } from '../runs/trigger/startRun.js';
import { isTerminal } from '../runs/state.js';
import { publicView } from '../workflows/template.js';
import { ConcurrencyLimitError, PermissionDeniedError, UnavailableError, ValidationError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { SERVICE_VERSION } from '../kernel/version.js';
import type { ModelRegistry } from '../models/registry.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import type { WorkflowRegistry } from '../workflows/registry.js';

export const MCP_SCOPE = 'mcp:connect';

export interface McpExportDeps {
  workflows: WorkflowRegistry;
  models: ModelRegistry;
  starter: RunStarter;
  authenticator: Authenticator;
}

export function mcpRouter(deps: McpExportDeps): Router {
  const router = Router();
  router.all('/mcp', async (req, res) => {
    const principal = await deps.authenticator.principalOf(req);
    if (!isAllowed(principal, { scope: MCP_SCOPE })) throw new PermissionDeniedError(`Permission denied: requires scope ${MCP_SCOPE}`);
    const server = mcpServerFor(principal, deps);
    // Stateless: one server and transport per request, nothing shared between callers.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    // The event stream (GET) closes once the caller's credentials end, as every stream does; a POST
    // is an ordinary request, bounded like a synchronous trigger by SVC_SYNC_TIMEOUT_MS.
    if (req.method === 'GET')
      res.on(
        'close',
        deps.authenticator.watch(principal, () => void transport.close()),
      );
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return router;
}

function exported(principal: Principal, deps: McpExportDeps): WorkflowDefinition[] {
  return deps.workflows.activeAll().filter((w) => w.trigger.mcpEnabled && isAllowed(principal, workflowGate(w)));
}

function mcpServerFor(principal: Principal, deps: McpExportDeps): Server {
  const server = new Server({ name: 'svc', version: SERVICE_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: exported(principal, deps).map((workflow) => ({
      name: workflow.name,
      description: workflow.description ?? workflow.name,
      inputSchema: { ...inputSchemaOf(workflow, deps.models), type: 'object' as const },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const workflow = exported(principal, deps).find((w) => w.name === request.params.name);
    if (!workflow) return errorResult(`No tool named ${request.params.name}`);
    const readInput = () => request.params.arguments ?? {};
    try {
      return toolResult(await deps.starter.startAndWait({ workflow, caller: principal, readInput, source: 'body', trigger: 'mcp' }));
    } catch (error) {
      if (error instanceof ValidationError)
        return errorResult('The arguments do not match the input schema', { detail: error.issues as unknown as JsonObject[] });
      if (error instanceof UnavailableError) return unavailableResult(error);
      // The HTTP answer's 429: its code and retry hint, nothing was started.
      if (error instanceof ConcurrencyLimitError) return errorResult(error.message, { code: error.code, retry_after_s: error.retryAfterSeconds });
      throw error;
    }
  });
  return server;
}

/** {run_id, status, body}: pending (with its approval, if any), failed or aborted (isError), or completed. */
function toolResult({ runId, state }: SettledRun): CallToolResult {
  if (!isTerminal(state.status)) {
    const pending = { run_id: runId, status: state.status, approval: state.approval ?? null, body: null };
    return { content: [{ type: 'text', text: JSON.stringify(pending) }], structuredContent: pending };
  }
  if (state.status !== 'completed') {
    const failed = { run_id: runId, status: state.status, body: null, error: state.error ?? { message: 'The run was aborted', details: '' } };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(failed) }], structuredContent: failed };
  }
  const body = state.output ?? publicView(state.context);
  const result = { run_id: runId, status: state.status, body };
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
}

/** A run the database did not record: the HTTP answer's code and retry hint, and the run only when it may exist. */
function unavailableResult(error: UnavailableError): CallToolResult {
  const extra: JsonObject = { code: error.code, retry_after_s: error.retryAfterSeconds };
  if (typeof error.fields.runId === 'string') extra.run_id = error.fields.runId;
  return errorResult(error.message, extra);
}

function errorResult(message: string, extra: JsonObject = {}): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ message, ...extra }) }] };
}
