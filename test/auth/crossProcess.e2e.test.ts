// Two server processes on one database: a logout or a session end on one is honoured by the other within a second.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { generateSigningKeyHex } from '../../src/auth/keys.js';
import { SESSION_ENDED_MESSAGE } from '../../src/auth/middleware.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase, freePort } from '../support/db.js';
import { bootstrapAdmin, call, client, eventually, expectUnauthenticated, login, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PROPAGATION_LIMIT_MS = 1000;

describe('revocation across worker processes', function () {
  this.timeout(60_000);
  const signingKeyHex = generateSigningKeyHex();
  let local: Service;
  let child: ChildProcess | undefined;
  let childOutput = '';
  let remoteUrl: string;
  let admin: Admin;
  const email = 'ivy@example.com';
  const password = 'ivy-password-1';
  let userId: string;

  const me = (url: string, token: string) => call(url, 'GET', '/auth/me', { token });
  const isRefused = (url: string, token: string) => async () => (await me(url, token)).status === 401;

  before(async () => {
    const databaseUrl = await createTestDatabase();
    local = await startTestService({ databaseUrl, env: { SVC_SIGNING_KEY: signingKeyHex } });
    const port = await freePort();
    remoteUrl = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: process.cwd(),
      env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', SVC_SIGNING_KEY: signingKeyHex, SVC_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (childOutput += chunk.toString()));
    const up = await eventually(async () => {
      if (child!.exitCode !== null) return true;
      return fetch(`${remoteUrl}/health`).then(
        (r) => r.ok,
        () => false,
      );
    }, 30_000, 100);
    expect(child.exitCode, childOutput).to.equal(null);
    expect(up.ok, `the second worker did not come up:\n${childOutput}`).to.equal(true);

    admin = await bootstrapAdmin(local.url);
    const created = await client(local.url, admin.token).post('/auth/admin/users', { email, password });
    expect(created.status).to.equal(201);
    userId = created.body.id;
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child!.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await local?.close();
  });

  it('accepts on each worker the tokens the other minted', async () => {
    const fromLocal = await login(local.url, email, password);
    expect((await me(remoteUrl, fromLocal)).status).to.equal(200);
    expect((await me(remoteUrl, admin.token)).body.user_id).to.equal(admin.userId);
  });

  it('refuses on the first worker, within a second, a token logged out on the second', async () => {
    const token = await login(local.url, email, password);
    expect((await me(local.url, token)).status).to.equal(200);
    expect((await client(remoteUrl, token).post('/auth/logout')).status).to.equal(204);
    expectUnauthenticated(await me(remoteUrl, token));
    const refused = await eventually(isRefused(local.url, token), PROPAGATION_LIMIT_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(local.url, token), /revoked/);
  });

  it('refuses on the second worker, within a second, a token logged out on the first', async () => {
    const token = await login(remoteUrl, email, password);
    expect((await me(remoteUrl, token)).status).to.equal(200);
    expect((await client(local.url, token).post('/auth/logout')).status).to.equal(204);
    const refused = await eventually(isRefused(remoteUrl, token), PROPAGATION_LIMIT_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(remoteUrl, token), /revoked/);
  });

  it('ends the sessions on the first worker, within a second, when the user is deactivated on the second', async () => {
    const token = await login(remoteUrl, email, password);
    expect((await me(local.url, token)).status).to.equal(200);
    const deactivated = await client(remoteUrl, admin.token).patch(`/auth/admin/users/${userId}`, { is_active: false });
    expect(deactivated.status, JSON.stringify(deactivated.body)).to.equal(200);
    expectUnauthenticated(await me(remoteUrl, token), SESSION_ENDED_MESSAGE);
    const refused = await eventually(isRefused(local.url, token), PROPAGATION_LIMIT_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(local.url, token), SESSION_ENDED_MESSAGE);
    // The admin's own token is untouched on both workers.
    expect((await me(local.url, admin.token)).status).to.equal(200);
    expect((await me(remoteUrl, admin.token)).status).to.equal(200);
  });
});
