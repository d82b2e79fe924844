// Shared pieces of the agent tests: the fixture project (copied, with the live MCP URL) served against
// the fake model and MCP server, and a step's end in a journal.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Service } from '../../../src/main.js';
import { copyProject } from '../../support/projects.js';
import { startTestService } from '../../support/service.js';
import type { FakeOpenAi } from './fakeOpenAi.js';
import type { McpHttpServer } from './mcpHttpServer.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const FIXTURES = path.join(REPO, 'test/agents/fixtures');
export const AGENT_PROJECT = path.join(FIXTURES, 'project');
export const SIGNING_KEY = '3c'.repeat(32);

/**
 * The agent project with `http_tools` pointing at a live Streamable HTTP MCP server. The copy lives
 * outside the repository, so the stdio server is named by its absolute path (its imports resolve
 * from there), while it still starts in the copy's folder.
 */
export function agentProject(mcpUrl: string): string {
  return copyProject(AGENT_PROJECT, {
    'artifacts/mcp.yaml': [
      'kind: Artifact',
      'metadata: {name: stdio_tools, version: "1", description: The stdio MCP server of the agent tests.}',
      'spec:',
      '  type: mcp',
      '  content:',
      '    command: node',
      `    args: [${JSON.stringify(path.join(FIXTURES, 'mcp-tools-server.mjs'))}]`,
      '',
    ].join('\n'),
    'artifacts/http_tools.yaml': [
      'kind: Artifact',
      'metadata: {name: http_tools, version: "1", description: The live Streamable HTTP MCP server.}',
      'spec:',
      '  type: mcp',
      '  content:',
      `    url: ${mcpUrl}`,
      '    headers: {x-test-header: agents}',
      '',
    ].join('\n'),
  });
}

/**
 * Starts the fake model and the MCP server, then the agent project (or the one `project` makes for
 * the MCP server's URL) against them, in this process.
 */
export async function startAgentService(fake: FakeOpenAi, mcp: McpHttpServer, project: (mcpUrl: string) => string = agentProject): Promise<Service> {
  await fake.start();
  await mcp.start();
  return startTestService({ projectDir: project(mcp.url), env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_LLM_BASE_URL: fake.baseUrl } });
}

/** The step_completed / step_failed of a step in a journal. */
export function stepEnd(journal: any[], stepId: string): any {
  const end = journal.find((e) => (e.type === 'step_completed' || e.type === 'step_failed') && e.agent_id === stepId);
  expect(end, `no end of step ${stepId} in ${journal.map((e) => `${e.type}:${e.agent_id}`).join(',')}`).to.not.equal(undefined);
  return end;
}
