// Shared pieces of the agent tests: the fixture project (copied, with the live MCP URL), users with
// roles, an SSE reader, run journals and status polling.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call, client, login } from '../../support/http.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const FIXTURES = path.join(REPO, 'test/agents/fixtures');
export const AGENT_PROJECT = path.join(FIXTURES, 'project');
export const SIGNING_KEY = '3c'.repeat(32);
const PASSWORD = 'agent-tests-password';

const copies = new Set<string>();
process.once('exit', () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A private copy of a fixture project; `files` (relative path -> text) are written on top. */
export function copyProject(source: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-agents-'));
  cpSync(source, dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  copies.add(dir);
  return dir;
}

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

/** A user with the given roles (role name -> scopes); answers its id and token. */
export async function createUser(baseUrl: string, adminToken: string, email: string, roles: Record<string, string[]>): Promise<{ id: string; token: string }> {
  const admin = client(baseUrl, adminToken);
  const created = await admin.post('/auth/admin/users', { email, password: PASSWORD });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const id = created.body.id as string;
  const existing = (await admin.get('/auth/admin/roles')).body as { id: string; name: string }[];
  for (const [name, scopes] of Object.entries(roles)) {
    let roleId = existing.find((r) => r.name === name)?.id;
    if (!roleId) {
      const role = await admin.post('/auth/admin/roles', { name, scopes });
      expect(role.status, JSON.stringify(role.body)).to.equal(201);
      roleId = role.body.id as string;
    }
    const assigned = await admin.post(`/auth/admin/users/${id}/roles/${roleId}`);
    expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  }
  return { id, token: await login(baseUrl, email, PASSWORD) };
}

export interface SseFrame {
  id?: string;
  event?: string;
  data: any;
}

/** Reads a whole SSE response (GET or POST) until the server ends it or `timeoutMs` passes. */
export async function readSse(url: string, options: { token?: string; method?: string; json?: unknown; timeoutMs?: number } = {}): Promise<{ status: number; frames: SseFrame[]; text: string }> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), options.timeoutMs ?? 15_000);
  try {
    const response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      signal: abort.signal,
      ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
    });
    const text = await response.text();
    return { status: response.status, frames: parseSse(text), text };
  } finally {
    clearTimeout(timer);
  }
}

export function parseSse(text: string): SseFrame[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n').filter((line) => line.length > 0 && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => {
      const frame: SseFrame = { data: undefined };
      const data: string[] = [];
      for (const line of lines) {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') frame.id = value;
        else if (field === 'event') frame.event = value;
        else if (field === 'data') data.push(value);
      }
      frame.data = data.length > 0 ? JSON.parse(data.join('\n')) : undefined;
      return frame;
    });
}

/** The journal as `GET /api/runs/{id}/events?follow=false` serves it (each frame's data). */
export async function journalOf(baseUrl: string, token: string, runId: string): Promise<any[]> {
  const result = await readSse(`${baseUrl}/api/runs/${runId}/events?follow=false`, { token });
  expect(result.status, result.text).to.equal(200);
  return result.frames.map((f) => f.data);
}

/** Polls GET /api/runs/{id} until its status is one of `statuses`. */
export async function waitForStatus(baseUrl: string, token: string, runId: string, statuses: string[], timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await call(baseUrl, 'GET', `/api/runs/${runId}`, { token });
    if (run.status === 200 && statuses.includes(run.body.status)) return run.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not reach ${statuses.join('|')}: ${JSON.stringify(run.body)}`);
    await sleep(25);
  }
}

/** Polls the journal until an event of `type` (optionally matching `where`) is in it. */
export async function waitForEvent(baseUrl: string, token: string, runId: string, type: string, where: (e: any) => boolean = () => true, timeoutMs = 10_000): Promise<any[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const journal = await journalOf(baseUrl, token, runId);
    if (journal.some((e) => e.type === type && where(e))) return journal;
    if (Date.now() > deadline) throw new Error(`no ${type} in run ${runId}: ${journal.map((e) => e.type).join(',')}`);
    await sleep(50);
  }
}

/** Every key starting with `_` anywhere in a JSON value, with its path. */
export function privateKeys(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => privateKeys(item, `${at}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [...(key.startsWith('_') ? [`${at}.${key}`] : []), ...privateKeys(item, `${at}.${key}`)]);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The step_completed / step_failed of a step in a journal. */
export function stepEnd(journal: any[], stepId: string): any {
  const end = journal.find((e) => (e.type === 'step_completed' || e.type === 'step_failed') && e.agent_id === stepId);
  expect(end, `no end of step ${stepId} in ${journal.map((e) => `${e.type}:${e.agent_id}`).join(',')}`).to.not.equal(undefined);
  return end;
}
