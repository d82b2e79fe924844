// Two server processes on one database: a logout or a session end on one is honoured by the other, also
// across a LISTEN reconnect. Where the observing worker runs in this process its safety-net poll is
// stopped, so what it learns of the other's commits came through LISTEN/NOTIFY.
import { metricsRegistry } from '../../src/metrics/registry.js';
import { parseScrape } from '../support/prometheus.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import pg from 'pg';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { SESSION_ENDED_MESSAGE } from '../../src/iam/authenticator.js';
import { connectionConfig } from '../../src/db/pool.js';
import type { Service } from '../../src/main.js';
import { waitUntil } from '../eventstore/helpers.js';
import { createTestDatabase, testServerUrl } from '../support/db.js';
import { bootstrapAdmin, call, client, eventually, expectUnauthenticated, login, type Admin } from '../support/http.js';
import { emptyProjectDir, startTestService } from '../support/service.js';
import { ServiceProcess } from '../support/serviceProcess.js';
import { createUser } from '../support/users.js';

/** Generous: a revocation that has not reached the other worker within this is not coming. */
const PROPAGATION_DEADLINE_MS = 15_000;

/** Stops a service's safety-net poll: what it learns of another worker's commits then comes through LISTEN/NOTIFY. */
function stopSafetyNetPoll(service: Service): void {
  const wakeUps = service.kernel.wakeUps as unknown as { pollTimer?: NodeJS.Timeout };
  expect(wakeUps.pollTimer, 'WakeUps keeps its poll timer in pollTimer').to.not.equal(undefined);
  clearInterval(wakeUps.pollTimer);
}

describe('revocation across worker processes', function () {
  this.timeout(60_000);
  const signingKeyHex = generateSigningKeyHex();
  let local: Service;
  /** Polls every 2 s as deployed: what it refuses within the deadline may also have come by that poll. */
  let remote: ServiceProcess;
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
    stopSafetyNetPoll(local);
    remote = await ServiceProcess.start(databaseUrl, emptyProjectDir(), { SVC_SIGNING_KEY: signingKeyHex });
    remoteUrl = remote.url;
    admin = await bootstrapAdmin(local.url);
    userId = (await createUser(local.url, admin.token, email, {}, { password, signIn: false })).id;
  });

  after(async () => {
    await remote?.stop();
    await local?.close();
  });

  it('accepts on each worker the tokens the other minted', async () => {
    const fromLocal = await login(local.url, email, password);
    expect((await me(remoteUrl, fromLocal)).status).to.equal(200);
    expect((await me(remoteUrl, admin.token)).body.user_id).to.equal(admin.userId);
  });

  it('refuses on the first worker (through LISTEN/NOTIFY) a token logged out on the second', async () => {
    const token = await login(local.url, email, password);
    expect((await me(local.url, token)).status).to.equal(200);
    expect((await client(remoteUrl, token).post('/auth/logout')).status).to.equal(204);
    expectUnauthenticated(await me(remoteUrl, token));
    const refused = await eventually(isRefused(local.url, token), PROPAGATION_DEADLINE_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(local.url, token), /revoked/);
  });

  it('refuses on the second worker a token logged out on the first', async () => {
    const token = await login(remoteUrl, email, password);
    expect((await me(remoteUrl, token)).status).to.equal(200);
    expect((await client(local.url, token).post('/auth/logout')).status).to.equal(204);
    const refused = await eventually(isRefused(remoteUrl, token), PROPAGATION_DEADLINE_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(remoteUrl, token), /revoked/);
  });

  it('ends the sessions on the first worker (through LISTEN/NOTIFY) when the user is deactivated on the second', async () => {
    const token = await login(remoteUrl, email, password);
    expect((await me(local.url, token)).status).to.equal(200);
    const deactivated = await client(remoteUrl, admin.token).patch(`/auth/admin/users/${userId}`, { is_active: false });
    expect(deactivated.status, JSON.stringify(deactivated.body)).to.equal(200);
    expectUnauthenticated(await me(remoteUrl, token), SESSION_ENDED_MESSAGE);
    const refused = await eventually(isRefused(local.url, token), PROPAGATION_DEADLINE_MS);
    expect(refused.ok, `still accepted after ${refused.elapsedMs} ms`).to.equal(true);
    expectUnauthenticated(await me(local.url, token), SESSION_ENDED_MESSAGE);
    // The admin's own token is untouched on both workers.
    expect((await me(local.url, admin.token)).status).to.equal(200);
    expect((await me(remoteUrl, admin.token)).status).to.equal(200);
  });
});

describe('revocation across a LISTEN reconnect', function () {
  this.timeout(60_000);
  const signingKeyHex = generateSigningKeyHex();
  let databaseName: string;
  /** On the server's own database: a database cannot close itself to new connections. */
  let admin: pg.Client;
  let first: Service;
  let second: Service;
  let firstListenPid: number;

  const me = (url: string, token: string) => call(url, 'GET', '/auth/me', { token });
  const listenBackends = async (): Promise<number[]> => {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE application_name = 'svc-listen' AND datname = $1 ORDER BY pid`,
      [databaseName],
    );
    return rows.map((r) => r.pid);
  };
  /** Keeps new connections out (the first worker's LISTEN reconnects among them); open ones go on. */
  const allowConnections = (allowed: boolean) => admin.query(`ALTER DATABASE "${databaseName}" ALLOW_CONNECTIONS ${allowed}`);

  before(async () => {
    const databaseUrl = await createTestDatabase();
    databaseName = new URL(databaseUrl).pathname.slice(1);
    admin = new pg.Client(connectionConfig(testServerUrl(), 'test-admin'));
    await admin.connect();
    first = await startTestService({ databaseUrl, env: { SVC_SIGNING_KEY: signingKeyHex } });
    const backends = await listenBackends();
    expect(backends, 'the first worker listens on one connection').to.have.length(1);
    firstListenPid = backends[0]!;
    second = await startTestService({ databaseUrl, env: { SVC_SIGNING_KEY: signingKeyHex } });
  });
  after(async () => {
    await allowConnections(true).catch(() => undefined);
    await second?.close();
    await first?.close();
    await admin?.end();
  });

  it('refuses on the first worker, once its LISTEN connection is back, a token logged out on the second while it was disconnected', async () => {
    // The first worker's 2 s safety-net poll would bring the revocation anyway; without it only the reconnect can.
    stopSafetyNetPoll(first);

    const root = await bootstrapAdmin(second.url);
    const created = await client(second.url, root.token).post('/auth/admin/users', { email: 'rex@example.com', password: 'rex-password-1' });
    expect(created.status).to.equal(201);
    const token = await login(first.url, 'rex@example.com', 'rex-password-1');
    expect((await me(first.url, token)).status).to.equal(200);

    const reconnects: number[] = [];
    // Both services run in this process: their counter is this process's.
    const counted = async () => parseScrape(await metricsRegistry.metrics()).value('svc_listen_reconnects_total');
    const countedBefore = await counted();
    const subscription = first.kernel.wakeUps.reconnected$.subscribe(() => reconnects.push(Date.now()));
    try {
      // The logout on the second worker needs pooled connections: open them before the database closes.
      await Promise.all(Array.from({ length: 4 }, () => second.kernel.pool.query('SELECT pg_sleep(0.05)')));
      await allowConnections(false);
      try {
        const { rows } = await admin.query<{ terminated: boolean }>('SELECT pg_terminate_backend($1) AS terminated', [firstListenPid]);
        expect(rows[0]!.terminated).to.equal(true);
        await waitUntil(async () => !(await listenBackends()).includes(firstListenPid), 5000, 'the LISTEN backend to go');

        expect((await client(second.url, token).post('/auth/logout')).status).to.equal(204);
        expectUnauthenticated(await me(second.url, token), /revoked/);
        // While disconnected the first worker cannot know: its NOTIFY was lost and nothing polls.
        await sleep(300);
        expect(reconnects, 'reconnected while the database refused connections').to.deep.equal([]);
        expect((await me(first.url, token)).status, 'the first worker heard of the logout without its LISTEN connection').to.equal(200);
      } finally {
        await allowConnections(true);
      }

      const back = await eventually(async () => reconnects.length > 0, 10_000);
      expect(back.ok, 'the LISTEN connection did not come back').to.equal(true);
      expect(await counted(), 'svc_listen_reconnects_total').to.equal(countedBefore + reconnects.length);
      const refused = await eventually(async () => (await me(first.url, token)).status === 401, PROPAGATION_DEADLINE_MS);
      expect(refused.ok, `still accepted ${Date.now() - reconnects[0]!} ms after the reconnect`).to.equal(true);
      expectUnauthenticated(await me(first.url, token), /revoked/);
      expect(await listenBackends()).to.have.length(2);
      // Only that token: a new sign-in on the first worker works.
      expect((await me(first.url, await login(first.url, 'rex@example.com', 'rex-password-1'))).status).to.equal(200);
    } finally {
      subscription.unsubscribe();
    }
  });
});
