// Shared pieces of the model tests: fixture projects copied to temp dirs, granting roles, a statement-counting proxy.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { call } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { roleId } from '../support/users.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

/** A private copy of a fixture project (forks write into <project>/models/). */
export function copyFixture(name: string): string {
  return copyProject(path.join(FIXTURES, name));
}

/**
 * Adds a role (created with `scopes` on first use) to a user and answers a fresh token from POST
 * /auth/refresh, which snapshots the roles again without a bcrypt comparison; the old token is
 * revoked and `user.token` replaced. Only adding: removing a role ends the user's sessions.
 */
export async function grantRole(
  baseUrl: string,
  adminToken: string,
  user: { id: string; token: string },
  roleName: string,
  scopes: string[] = [],
): Promise<string> {
  const assigned = await call(baseUrl, 'POST', `/auth/admin/users/${user.id}/roles/${await roleId(baseUrl, adminToken, roleName, scopes)}`, {
    token: adminToken,
  });
  expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  const refreshed = await call(baseUrl, 'POST', '/auth/refresh', { token: user.token });
  expect(refreshed.status, JSON.stringify(refreshed.body)).to.equal(200);
  user.token = refreshed.body.access_token as string;
  return user.token;
}

export interface CountingProxy {
  /** The database URL with host and port replaced by the proxy's. */
  url: string;
  /** SQL text of every Query ('Q') and Parse ('P') message seen so far, client to server. */
  statements: string[];
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of PostgreSQL that records the SQL of each simple Query and extended-protocol
 * Parse message the service sends. Bytes are forwarded untouched; only a copy is parsed.
 */
export async function startCountingProxy(databaseUrl: string): Promise<CountingProxy> {
  const target = new URL(databaseUrl);
  const statements: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const upstream = createConnection({ host: target.hostname, port: Number(target.port || 5432) });
    sockets.add(downstream).add(upstream);
    let buffer = Buffer.alloc(0);
    let isStartup = true;
    downstream.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (isStartup) {
          if (buffer.length < 8) break;
          const length = buffer.readInt32BE(0);
          if (buffer.length < length) break;
          const code = buffer.readInt32BE(4);
          // SSLRequest and GSSENCRequest come before the real startup message.
          if (code !== 80877103 && code !== 80877104) isStartup = false;
          buffer = buffer.subarray(length);
          continue;
        }
        if (buffer.length < 5) break;
        const length = buffer.readInt32BE(1);
        if (buffer.length < 1 + length) break;
        const type = String.fromCharCode(buffer[0]!);
        const body = buffer.subarray(5, 1 + length);
        if (type === 'Q') statements.push(body.subarray(0, body.indexOf(0)).toString('utf8'));
        if (type === 'P') {
          const afterName = body.indexOf(0) + 1;
          statements.push(body.subarray(afterName, body.indexOf(0, afterName)).toString('utf8'));
        }
        buffer = buffer.subarray(1 + length);
      }
    });
    upstream.on('data', (chunk: Buffer) => downstream.write(chunk));
    const closeBoth = () => {
      downstream.destroy();
      upstream.destroy();
      sockets.delete(downstream);
      sockets.delete(upstream);
    };
    downstream.on('close', closeBoth).on('error', closeBoth);
    upstream.on('close', closeBoth).on('error', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(databaseUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as { port: number }).port);
  return {
    url: proxied.toString(),
    statements,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
