// Shared pieces of the workflow tests: fixture projects, users with roles, an SSE reader, a fake HTTP server.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call, client, login } from '../support/http.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const ENGINE_PROJECT = path.join(FIXTURES, 'engine');
export const SIGNING_KEY = '5a'.repeat(32);
export const PASSWORD = 'workflow-tests-password';

const copies = new Set<string>();
process.once('exit', () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A private copy of a fixture project (forks write into it), removed when the process exits. */
export function copyFixture(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `svc-wf-${name}-`));
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  copies.add(dir);
  return dir;
}

/** Creates a user with the given roles (role name -> scopes; a role is also a group) and answers its id and token. */
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

/** Every key starting with `_` anywhere in a JSON value, with its path. */
export function privateKeys(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => privateKeys(item, `${at}[${index}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [...(key.startsWith('_') ? [`${at}.${key}`] : []), ...privateKeys(item, `${at}.${key}`)]);
}

export function expectNoPrivateKeys(value: unknown, what: string): void {
  expect(privateKeys(value), `${what} leaks engine-owned keys: ${JSON.stringify(value)}`).to.deep.equal([]);
}

export interface SseFrame {
  id?: string;
  event?: string;
  data: any;
  raw: string;
}

/** An open SSE response read frame by frame. */
export class SseReader {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  private ended = false;
  readonly frames: SseFrame[] = [];

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined,
    private readonly abort: AbortController,
    readonly text: string | undefined,
  ) {}

  static async open(url: string, options: { token?: string; headers?: Record<string, string>; method?: string; json?: unknown } = {}): Promise<SseReader> {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    const abort = new AbortController();
    const response = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      signal: abort.signal,
      ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
    });
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return new SseReader(response.status, response.headers, undefined, abort, await response.text());
    }
    return new SseReader(response.status, response.headers, response.body!.getReader(), abort, undefined);
  }

  /** The next frame, or undefined when the stream ended; rejects after `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseFrame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.takeFrame();
      if (frame) return frame;
      if (this.ended || !this.reader) return undefined;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no SSE frame within ${timeoutMs} ms (have ${this.frames.map((f) => f.event).join(',')})`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        this.reader.read(),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), remaining);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk === 'timeout') continue;
      if (chunk.done) this.ended = true;
      else this.buffer += this.decoder.decode(chunk.value, { stream: true });
    }
  }

  /** Every frame until the server ends the stream. */
  async readToEnd(timeoutMs = 10_000): Promise<SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.next(Math.max(1, deadline - Date.now()))) !== undefined);
    return this.frames;
  }

  /** Frames until one with `event` arrives (inclusive). */
  async until(event: string, timeoutMs = 10_000): Promise<SseFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = await this.next(Math.max(1, deadline - Date.now()));
      if (!frame) throw new Error(`stream ended before a ${event} frame`);
      if (frame.event === event) return frame;
    }
  }

  get isEnded(): boolean {
    return this.ended;
  }

  close(): void {
    this.abort.abort();
  }

  private takeFrame(): SseFrame | undefined {
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return undefined;
      const raw = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const lines = raw.split('\n').filter((line) => !line.startsWith(':'));
      if (lines.length === 0) continue;
      const frame: SseFrame = { data: undefined, raw };
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
      this.frames.push(frame);
      return frame;
    }
  }
}

/** The journal of a run as `GET /api/runs/{id}/events?follow=false` serves it (the `data` of each frame). */
export async function journalOf(baseUrl: string, token: string, runId: string): Promise<any[]> {
  const reader = await SseReader.open(`${baseUrl}/api/runs/${runId}/events?follow=false`, { token });
  expect(reader.status, reader.text).to.equal(200);
  return (await reader.readToEnd()).map((f) => f.data);
}

/** Polls GET /api/runs/{id} until the status is one of `statuses`. */
export async function waitForStatus(baseUrl: string, token: string, runId: string, statuses: string[], timeoutMs = 10_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await call(baseUrl, 'GET', `/api/runs/${runId}`, { token });
    if (run.status === 200 && statuses.includes(run.body.status)) return run.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not reach ${statuses.join('|')}: ${JSON.stringify(run.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export type FakeHandler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A local HTTP server on 127.0.0.1, port 0; every request is recorded; routes by path. */
export class FakeServer {
  readonly requests: RecordedRequest[] = [];
  private readonly routes = new Map<string, FakeHandler>();
  private server: Server | undefined;
  url = '';

  on(pathname: string, handler: FakeHandler): void {
    this.routes.set(pathname, handler);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        this.requests.push(recorded);
        const handler = this.routes.get(new URL(recorded.url, 'http://x').pathname);
        if (!handler) {
          res.writeHead(404).end();
          return;
        }
        void Promise.resolve(handler(recorded, res)).catch(() => res.destroy());
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  hits(pathname: string): RecordedRequest[] {
    return this.requests.filter((r) => new URL(r.url, 'http://x').pathname === pathname);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
