// Shared pieces of the approval tests: the fixture project, users with roles, SSE reading, run polling, `svc serve` children.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../support/db.js';
import { call, client, eventually, login } from '../support/http.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** refund (group finance, 1-day expiry), leave (no group), quick (expires after 1 s). */
export const HITL_PROJECT = path.join(REPO, 'test/approvals/fixtures/hitl');
/** One key for every service of a test, so a token minted by one is good on all of them. */
export const SIGNING_KEY = 'c3'.repeat(32);
export const PASSWORD = 'approval-tests-password';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface User {
  id: string;
  token: string;
}

/** Creates a user holding the given roles (role name -> scopes; a role is also a group), logged in. */
export async function createUser(baseUrl: string, adminToken: string, email: string, roles: Record<string, string[]>): Promise<User> {
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

/** A finance member: may request refunds and decide approvals, and is in the group `finance`. */
export const FINANCE_ROLES = { finance: ['approvals:decide', 'refunds:request'] };

export interface SseFrame {
  id?: string;
  event?: string;
  data: any;
}

export interface SseResult {
  status: number;
  contentType: string;
  frames: SseFrame[];
}

/** Sends a request with `Accept: text/event-stream` and reads frames until the server ends the stream. */
export async function readSse(url: string, options: { token?: string; method?: string; json?: unknown; timeoutMs?: number } = {}): Promise<SseResult> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method: options.method ?? 'GET',
    headers,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
  });
  const text = await response.text();
  const frames: SseFrame[] = [];
  for (const raw of text.split('\n\n')) {
    const lines = raw.split('\n').filter((line) => line.length > 0 && !line.startsWith(':'));
    if (lines.length === 0) continue;
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
    frames.push(frame);
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', frames };
}

/** The journal of a run as `GET /api/runs/{id}/events?follow=false` serves it (each frame's `data`). */
export async function journalOf(baseUrl: string, token: string, runId: string): Promise<any[]> {
  const result = await readSse(`${baseUrl}/api/runs/${runId}/events?follow=false`, { token });
  expect(result.status).to.equal(200);
  return result.frames.map((f) => f.data);
}

/** Polls GET /api/runs/{id} until its status is one of `statuses`; answers the descriptor. */
export async function waitForRun(baseUrl: string, token: string, runId: string, statuses: string[], timeoutMs = 10_000): Promise<any> {
  let last: any;
  const done = await eventually(async () => {
    const run = await call(baseUrl, 'GET', `/api/runs/${runId}`, { token });
    last = run.body;
    return run.status === 200 && statuses.includes(run.body.status);
  }, timeoutMs, 25);
  expect(done.ok, `run ${runId} did not reach ${statuses.join('|')} in ${timeoutMs} ms: ${JSON.stringify(last)}`).to.equal(true);
  return last;
}

/** Triggers a refund that needs a human (amount over 100); checks the 202 and answers the descriptor. */
export async function requestRefund(baseUrl: string, token: string, orderId: string, amount = 500): Promise<any> {
  const result = await call(baseUrl, 'POST', '/api/refunds', { token, json: { order_id: orderId, amount, reason: 'broken' } });
  expect(result.status, JSON.stringify(result.body)).to.equal(202);
  expect(result.body.status).to.equal('waiting_human');
  return result.body;
}

/** A `svc serve` child process on loopback (a real second process on the same database). */
export class ServiceProcess {
  output = '';
  readonly exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = once(child, 'exit').then(() => undefined);
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns `node --import tsx src/cli/main.ts serve` and waits for /health. */
  static async start(databaseUrl: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        SVC_PROJECT_DIR: HITL_PROJECT,
        SVC_SIGNING_KEY: SIGNING_KEY,
        SVC_LOG_LEVEL: 'warn',
        SVC_RUN_CLAIM_INTERVAL_MS: '200',
        SVC_RUN_LEASE_MS: '1500',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`);
    const up = await eventually(
      async () => !service.isRunning || (await fetch(`${service.url}/health`).then((r) => r.ok, () => false)),
      30_000,
      50,
    );
    if (!up.ok || !service.isRunning) {
      await service.kill();
      expect.fail(`the service did not come up:\n${service.output}`);
    }
    return service;
  }

  /** SIGKILL: a crash; waits until the process is gone. */
  async kill(): Promise<void> {
    if (this.isRunning) this.child.kill('SIGKILL');
    await this.exited;
  }
}
