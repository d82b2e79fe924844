// A write transaction held open in another database of the cluster (a private one: it would stall
// every other test on a shared server) must not stall a second instance's stream followers,
// revocations or session ends; /health and the log say the snapshot horizon is held back.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { withDatabase } from '../../src/db/pool.js';
import { HORIZON_HELD_MESSAGE } from '../../src/eventstore/horizon.js';
import { createLogger } from '../../src/kernel/logger.js';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { expectStreamEnds, followRun, Gates, startHeldRun, steer, STREAMS_PROJECT } from '../support/heldRuns.js';
import { bootstrapAdmin, call, client, eventually, expectUnauthenticated, login, type Admin } from '../support/http.js';
import { parseScrape } from '../support/prometheus.js';
import { startTestService } from '../support/service.js';
import { killAllServices, PROCESS_SIGNING_KEY, ServiceProcess } from '../support/serviceProcess.js';
import { createUser, USER_PASSWORD } from '../support/users.js';

/** Far below the 60 s the blocker would be held in production, far above what a delivery needs. */
const DEADLINE_MS = 20_000;

describe('a long write transaction elsewhere on the cluster', function () {
  this.timeout(120_000);
  const gates = new Gates();
  let folder: string;
  let cluster: EmbeddedPostgres;
  let databaseUrl: string;
  let a: Service;
  let b: ServiceProcess;
  let admin: Admin;
  /** On the service's database: to check that the blocker really holds events behind the gate. */
  let observer: pg.Client;
  let blocker: pg.Client | undefined;

  const health = async (url: string) => (await call(url, 'GET', '/health')).body as Record<string, any>;
  const horizonAge = async (url: string) =>
    parseScrape(String((await call(url, 'GET', '/metrics', { token: admin.token })).body)).value('svc_log_horizon_age_seconds');
  const isAccepted = async (url: string, token: string) => (await call(url, 'GET', '/auth/me', { token })).status === 200;
  /** Committed events a gated reader cannot see yet. */
  const eventsBehindGate = async () =>
    Number(
      (await observer.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE transaction_id >= pg_snapshot_xmin(pg_current_snapshot())')).rows[0]!.n,
    );

  /** A user holding the `follower` role, not signed in yet. */
  async function newUser(email: string): Promise<string> {
    return (await createUser(a.url, admin.token, email, { follower: [] }, { signIn: false })).id;
  }

  before(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'svc-long-tx-'));
    // Under root the cluster runs as the `postgres` user, which must be able to enter the folder.
    await chmod(folder, 0o755);
    cluster = await startEmbeddedPostgres({ dataDir: path.join(folder, 'pgdata'), port: await freePort(), logger: createLogger('silent'), persistent: false });
    const setup = new pg.Client({ connectionString: cluster.url });
    await setup.connect();
    await setup.query('CREATE DATABASE svc');
    await setup.query('CREATE DATABASE elsewhere');
    await setup.end();
    databaseUrl = withDatabase(cluster.url, 'svc');
    const env = { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY, SVC_HORIZON_STALL_SECONDS: '1' };
    a = await startTestService({ databaseUrl, projectDir: STREAMS_PROJECT, env });
    b = await ServiceProcess.start(databaseUrl, STREAMS_PROJECT, env);
    admin = await bootstrapAdmin(a.url);
    expect((await client(a.url, admin.token).post('/auth/admin/roles', { name: 'follower', scopes: ['runs:read'] })).status).to.equal(201);
    observer = new pg.Client({ connectionString: databaseUrl });
    await observer.connect();
  });
  after(async () => {
    await blocker?.end().catch(() => undefined);
    gates.releaseAll();
    await killAllServices();
    await a?.close();
    await observer?.end();
    await cluster?.stop();
    await rm(folder, { recursive: true, force: true });
    gates.remove();
  });

  it('lets instance B follow, revoke and end sessions while it is open, and says degraded until it ends', async () => {
    await newUser('follower@example.com');
    const streamToken = await login(a.url, 'follower@example.com', USER_PASSWORD);
    const loggedOutToken = await login(a.url, 'follower@example.com', USER_PASSWORD);
    const deactivatedId = await newUser('leaver@example.com');
    const deactivatedToken = await login(a.url, 'leaver@example.com', USER_PASSWORD);
    const runId = await startHeldRun(a.url, streamToken, gates.next());
    const reader = await followRun(b.url, streamToken, runId);
    for (const url of [a.url, b.url]) expect(await health(url)).to.deep.include({ status: 'ok', horizon: { status: 'ok' } });

    blocker = new pg.Client({ connectionString: withDatabase(cluster.url, 'elsewhere') });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('CREATE TABLE held (n int)');
    await blocker.query('INSERT INTO held VALUES (1)');

    // Appended through A: B's follower gets it though the event is behind the snapshot gate.
    await steer(a.url, admin.token, runId, 'through the gate');
    expect(await eventsBehindGate(), 'the steer is behind the gate').to.be.greaterThan(0);
    expect((await reader.until('steered', DEADLINE_MS)).data.payload.message).to.equal('through the gate');

    // A logout and a session end on A hold on B.
    expect(await isAccepted(b.url, loggedOutToken)).to.equal(true);
    expect((await client(a.url, loggedOutToken).post('/auth/logout')).status).to.equal(204);
    const revoked = await eventually(async () => !(await isAccepted(b.url, loggedOutToken)), DEADLINE_MS);
    expect(revoked.ok, 'B still accepts the logged-out token').to.equal(true);
    expectUnauthenticated(await call(b.url, 'GET', '/auth/me', { token: loggedOutToken }), /revoked/);
    expect((await client(a.url, admin.token).patch(`/auth/admin/users/${deactivatedId}`, { is_active: false })).status).to.equal(200);
    const ended = await eventually(async () => !(await isAccepted(b.url, deactivatedToken)), DEADLINE_MS);
    expect(ended.ok, 'B still accepts the token of the deactivated user').to.equal(true);

    // Both instances say the horizon is held, and why.
    for (const url of [a.url, b.url]) {
      const held = await eventually(async () => (await health(url)).status === 'degraded', DEADLINE_MS);
      expect(held.ok, `${url}/health never said degraded`).to.equal(true);
      const body = await health(url);
      expect(body).to.include({ status: 'degraded', database: 'ok' });
      expect(body.horizon.status).to.equal('held');
      expect(body.horizon.held_for_s).to.be.a('number').and.at.least(1);
      expect(body.horizon.detail)
        .to.be.a('string')
        .and.match(/transaction/);
    }
    // The same age in /metrics: the alert on the horizon needs no /health poller.
    expect(await horizonAge(a.url)).to.be.at.least(1);

    // The stream's own token logged out on A: B closes it, the blocker still open.
    expect((await client(a.url, streamToken).post('/auth/logout')).status).to.equal(204);
    await expectStreamEnds(reader, DEADLINE_MS);
    expect(await eventsBehindGate(), 'the blocker was open throughout').to.be.greaterThan(0);

    await blocker.query('COMMIT');
    for (const url of [a.url, b.url]) {
      const back = await eventually(async () => (await health(url)).status === 'ok', DEADLINE_MS);
      expect(back.ok, `${url}/health stayed degraded after the commit`).to.equal(true);
    }
    const aged = await eventually(async () => (await horizonAge(a.url)) === 0, DEADLINE_MS);
    expect(aged.ok, 'svc_log_horizon_age_seconds stayed above 0 after the commit').to.equal(true);
    const warnings = b.output.split('\n').filter((line) => line.includes(HORIZON_HELD_MESSAGE));
    expect(warnings, 'one warning for the episode, not one per poll').to.have.length(1);
  });
});
