// Long-lived answers end with their credentials: a logout, a deactivation, a role removal or the
// token's expiry closes an open stream (runs SSE, trigger SSE, gRPC-Web, MCP), on this process and on another.
import { createClient, Code, ConnectError } from '@connectrpc/connect';
import { createGrpcWebTransport } from '@connectrpc/connect-web';
import { expect } from 'chai';
import { Execution } from '../../src/contract/gen/svc/v1/execution_pb.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { expectStreamEnds, followRun, Gates, startHeldRun, steer, STREAMS_PROJECT } from '../support/heldRuns.js';
import { bootstrapAdmin, call, client, eventually, expectUnauthenticated, login, type Admin } from '../support/http.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { killAllServices, PROCESS_SIGNING_KEY, ServiceProcess } from '../support/serviceProcess.js';
import { SseReader } from '../support/sse.js';
import { createUser, USER_PASSWORD } from '../support/users.js';

/** What every streaming user holds: `follower` to read runs and connect over MCP, `extra` to lose. */
const ROLES = { follower: ['runs:read', 'mcp:connect'], extra: ['artifacts:read'] };

describe('open streams end with their credentials', function () {
  this.timeout(60_000);
  const gates = new Gates();
  let databaseUrl: string;
  let local: Service;
  let remote: ServiceProcess;
  let admin: Admin;
  const roleIds: Record<string, string> = {};
  let users = 0;

  /** A new user holding `follower` (runs:read, mcp:connect) and `extra`, and a token of theirs. */
  async function newUser(baseUrl = local.url): Promise<{ id: string; email: string; token: string }> {
    const email = `streamer${++users}@example.com`;
    const user = await createUser(local.url, admin.token, email, ROLES, { signIn: false });
    return { ...user, token: await login(baseUrl, email, USER_PASSWORD) };
  }

  /** A held run of a new user, its stream open on `streamUrl` and replayed up to the `first` step. */
  async function followedRun(streamUrl: string): Promise<{ user: { id: string; token: string }; runId: string; reader: SseReader }> {
    const user = await newUser();
    const runId = await startHeldRun(local.url, user.token, gates.next());
    return { user, runId, reader: await followRun(streamUrl, user.token, runId) };
  }

  /** The stream ended without the steer that was appended after the credentials ended. */
  async function expectEndedBeforeSteer(reader: SseReader, runId: string): Promise<void> {
    await steer(local.url, admin.token, runId, 'after the end');
    const tail = await expectStreamEnds(reader);
    expect(tail.map((f) => f.event)).to.not.include('steered');
  }

  before(async () => {
    databaseUrl = await createTestDatabase();
    local = await startTestService({ databaseUrl, projectDir: STREAMS_PROJECT, env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY } });
    remote = await ServiceProcess.start(databaseUrl, STREAMS_PROJECT);
    admin = await bootstrapAdmin(local.url);
    const adminApi = client(local.url, admin.token);
    for (const [name, scopes] of Object.entries(ROLES)) {
      const role = await adminApi.post('/auth/admin/roles', { name, scopes });
      expect(role.status, JSON.stringify(role.body)).to.equal(201);
      roleIds[name] = role.body.id as string;
    }
  });
  after(async () => {
    gates.releaseAll();
    await killAllServices();
    await local?.close();
    gates.remove();
  });

  describe('GET /api/runs/{id}/events on the process that ends them', () => {
    it('closes on logout, before an event appended afterwards', async () => {
      const { user, runId, reader } = await followedRun(local.url);
      expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectEndedBeforeSteer(reader, runId);
      expectUnauthenticated(await call(local.url, 'GET', `/api/runs/${runId}/events`, { token: user.token }), /revoked/);
    });

    it('closes when the user is deactivated', async () => {
      const { user, runId, reader } = await followedRun(local.url);
      expect((await client(local.url, admin.token).patch(`/auth/admin/users/${user.id}`, { is_active: false })).status).to.equal(200);
      await expectEndedBeforeSteer(reader, runId);
    });

    it('closes when a role is removed from the user (their sessions end)', async () => {
      const { user, runId, reader } = await followedRun(local.url);
      expect((await client(local.url, admin.token).delete(`/auth/admin/users/${user.id}/roles/${roleIds.extra}`)).status).to.equal(200);
      await expectEndedBeforeSteer(reader, runId);
    });

    it("stays open for other users' logouts and session ends", async () => {
      const { runId, reader } = await followedRun(local.url);
      const other = await newUser();
      expect((await client(local.url, other.token).post('/auth/logout')).status).to.equal(204);
      expect((await client(local.url, admin.token).patch(`/auth/admin/users/${other.id}`, { is_active: false })).status).to.equal(200);
      await steer(local.url, admin.token, runId, 'still here');
      expect((await reader.until('steered')).data.payload.message).to.equal('still here');
      expect(reader.isEnded).to.equal(false);
      reader.close();
    });
  });

  describe('GET /api/runs/{id}/events on another process', () => {
    it('closes on this process after a logout on the other one', async () => {
      const { user, reader } = await followedRun(local.url);
      expect((await client(remote.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectStreamEnds(reader);
    });

    it('closes on the other process after a logout on this one', async () => {
      const { user, reader } = await followedRun(remote.url);
      expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectStreamEnds(reader);
    });

    it('closes on the other process when the user is deactivated on this one', async () => {
      const { user, reader } = await followedRun(remote.url);
      expect((await client(local.url, admin.token).patch(`/auth/admin/users/${user.id}`, { is_active: false })).status).to.equal(200);
      await expectStreamEnds(reader);
    });
  });

  describe('token expiry', () => {
    let shortLived: Service;
    before(async () => {
      // A second process on the same database whose tokens live 2 s (plus the 5 s of tolerated clock skew).
      shortLived = await startTestService({
        databaseUrl,
        projectDir: STREAMS_PROJECT,
        env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY, SVC_TOKEN_TTL_SECONDS: '2' },
      });
    });
    after(async () => {
      await shortLived?.close();
    });

    it('closes a stream when its token expires, on any process', async () => {
      const user = await newUser(shortLived.url);
      const runId = await startHeldRun(local.url, user.token, gates.next());
      const reader = await followRun(local.url, user.token, runId);
      await expectStreamEnds(reader, 30_000);
      expectUnauthenticated(await call(local.url, 'GET', '/auth/me', { token: user.token }), /expired/);
    });
  });

  describe('the other long-lived answers', () => {
    it('closes the trigger stream (Accept: text/event-stream) on logout', async () => {
      const user = await newUser();
      const gate = gates.next();
      const reader = await SseReader.open(`${local.url}/api/gated`, { token: user.token, method: 'POST', json: { gate } });
      expect(reader.status, reader.text).to.equal(200);
      const runId = reader.headers.get('x-svc-run-id')!;
      expect((await reader.until('step')).data.step_id).to.equal('first');
      expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectStreamEnds(reader);
      gates.release(gate);
      await waitForStatus(local.url, admin.token, runId, ['completed'], 20_000);
      expect(reader.frames.map((f) => f.event)).to.not.include('done');
    });

    it('ends a gRPC-Web stream with UNAUTHENTICATED on logout', async () => {
      const user = await newUser();
      const gate = gates.next();
      const grpc = createClient(Execution, createGrpcWebTransport({ baseUrl: `${local.url}/grpc` }));
      const abort = new AbortController();
      const stream = grpc
        .runWorkflow(
          { workflowName: 'gated', payloadJson: JSON.stringify({ gate }) },
          { headers: { authorization: `Bearer ${user.token}` }, signal: abort.signal },
        )
        [Symbol.asyncIterator]();
      try {
        const first = await stream.next();
        expect(first.done).to.equal(false);
        expect(first.value!.stepId).to.equal('first');
        expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
        let timer: NodeJS.Timeout | undefined;
        const outcome = await Promise.race([
          stream.next().then(
            (next) => ({ next }),
            (error: unknown) => ({ error }),
          ),
          new Promise<'open'>((resolve) => (timer = setTimeout(() => resolve('open'), 15_000))),
        ]).finally(() => clearTimeout(timer));
        expect(outcome, 'the gRPC stream is still open 15 s after the logout').to.not.equal('open');
        expect(outcome).to.have.property('error');
        const error = ConnectError.from((outcome as { error: unknown }).error);
        expect(error.code).to.equal(Code.Unauthenticated);
        expect(error.rawMessage).to.match(/revoked/);
      } finally {
        abort.abort();
        gates.release(gate);
      }
    });

    it('closes the MCP event stream (GET /mcp) on logout', async () => {
      const user = await newUser();
      const reader = await SseReader.open(`${local.url}/mcp`, { token: user.token });
      expect(reader.status, reader.text).to.equal(200);
      expect(reader.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectStreamEnds(reader);
    });

    it('closes an MCP event stream on the other process after a logout here', async () => {
      const user = await newUser();
      const reader = await SseReader.open(`${remote.url}/mcp`, { token: user.token });
      expect(reader.status, reader.text).to.equal(200);
      expect((await client(local.url, user.token).post('/auth/logout')).status).to.equal(204);
      await expectStreamEnds(reader);
      const refused = await eventually(async () => (await call(remote.url, 'GET', '/auth/me', { token: user.token })).status === 401, 5000);
      expect(refused.ok).to.equal(true);
    });
  });
});
