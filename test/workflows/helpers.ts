// Shared pieces of the workflow tests: fixture projects and a fake HTTP server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { copyProject } from '../support/projects.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const ENGINE_PROJECT = path.join(FIXTURES, 'engine');
export const SIGNING_KEY = '5a'.repeat(32);

/** A private copy of a fixture project (forks write into it). */
export function copyFixture(name: string): string {
  return copyProject(path.join(FIXTURES, name));
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
