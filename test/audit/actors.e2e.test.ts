// Every write route of /openapi.json leaves events whose metadata names the actor, the source and the
// request id (BEYOND 3.1). Table-driven: a route of the document without an entry fails the test, so a
// new route cannot be forgotten. Also: the engine's events name the run's principal (source executor),
// a schedule's runs name the schedule (source scheduler).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { Service } from '../../src/main.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runOverGrpcWeb } from '../../src/client/grpc.js';
import { call, eventually, login, type HttpResult } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { startTestService } from '../support/service.js';
import { PROJECT as SCHEDULE_PROJECT } from '../schedules/helpers.js';

const PASSWORD = 'correct horse battery staple';

/** The fixture: the schedule tests' project (`ticks`, every second) plus an approval, a slow run and a model. */
const FILES = {
  'workflows/review.yaml': `kind: Workflow
metadata: {name: review, schema_version: v1}
spec:
  trigger:
    http: {path: /api/t/review, method: POST}
    input_schema: [{name: subject, type: string, required: true}]
  steps:
    - {id: confirm, kind: HumanInTheLoop, ui: {title: Approve}, output_key: confirm, routes: {approve: done, reject: done}}
    - {id: done, kind: Response, mapping: {subject: subject}}
`,
  'workflows/slow.yaml': `kind: Workflow
metadata: {name: slow, schema_version: v1}
spec:
  trigger:
    http: {path: /api/t/slow, method: POST}
    input_schema: [{name: note, type: string}]
  steps:
    - {id: wait, kind: Functional, runner: linger, params: {ms: 8000}} # long enough to control, short enough not to hold the close
`,
  'workflows/quick.yaml': `kind: Workflow
metadata: {name: quick, schema_version: v1, description: Notes its input and ends.}
spec:
  trigger:
    input_schema: [{name: note, type: string}]
    mcp: {enabled: true}
  steps:
    - {id: note, kind: Functional, runner: note}
`,
  'models/note.yaml': `kind: ModelDefinition
metadata: {name: Note, schema_version: v1}
spec:
  tablename: audit_notes
  datasource: primary
  fields:
    - {name: id, type: uuid, primary_key: true}
    - {name: title, type: string, required: true}
  api:
    crud: [create, read, update, delete, list]
`,
};

type Actor = { type: string; id: string };
type Send = (method: string, path: string, options?: { json?: unknown; form?: Record<string, string>; token?: string | null }) => Promise<HttpResult>;

/** What the entries share: ids created by earlier entries. */
interface Context {
  adminId: string;
  adminToken: string;
  [key: string]: string;
}

interface Entry {
  /** `METHOD /path/{param}` as in /openapi.json. */
  route: string;
  send: (ctx: Context, send: Send) => Promise<HttpResult>;
  /** Who the events name; the admin unless said. */
  actor?: (ctx: Context, answer: HttpResult) => Actor;
  /** Who the engine's events of a run the request started name (source executor); the actor unless said. */
  engineActor?: Actor;
  /** A route that changes nothing stored says so here, and why (the test checks it leaves no event). */
  leavesNoEvent?: string;
}

const admin = (ctx: Context): Actor => ({ type: 'user', id: ctx.adminId });
/** A schedule's runs have no principal, whoever asked for them: the engine runs them as the schedule. */
const SCHEDULE: Actor = { type: 'schedule', id: 'ticks/each_second' };
const partner = {
  kind: 'FederationProvider',
  version: 'v1',
  metadata: { name: 'partner' },
  enabled: true,
  spec: {
    provider: 'custom',
    client_id: 'partner-client',
    client_secret: 'partner-secret',
    auth_url: 'http://127.0.0.1:9/authorize',
    token_url: 'http://127.0.0.1:9/token',
    issuer: 'http://127.0.0.1:9',
    jwks_url: 'http://127.0.0.1:9/jwks',
    scope: 'openid email',
  },
};

async function pendingApproval(send: Send, runId: string): Promise<string> {
  let approvalId: string | undefined;
  await eventually(async () => {
    const list = await send('GET', '/api/approvals');
    approvalId = (list.body as { approval_id: string; run_id: string }[]).find((a) => a.run_id === runId)?.approval_id;
    return approvalId !== undefined;
  }, 20_000);
  expect(approvalId, `an approval of run ${runId}`).to.be.a('string');
  return approvalId!;
}

/** In order: later entries use what earlier ones created. */
const TABLE: Entry[] = [
  {
    route: 'POST /auth/bootstrap',
    send: async (ctx, send) => {
      const answer = await send('POST', '/auth/bootstrap', { json: { email: 'root@example.com', password: PASSWORD }, token: null });
      ctx.adminId = answer.body.user_id;
      ctx.adminToken = answer.body.access_token;
      return answer;
    },
    // The caller had no principal: the user it became is who acted.
    actor: (_ctx, answer) => ({ type: 'user', id: answer.body.user_id }),
  },
  {
    route: 'POST /auth/token',
    send: (_ctx, send) => send('POST', '/auth/token', { form: { username: 'root@example.com', password: PASSWORD, grant_type: 'password' }, token: null }),
    leavesNoEvent: 'a password login mints a stateless token and records nothing (federated sign-ins record RecordSignIn)',
  },
  {
    route: 'POST /auth/admin/roles',
    send: async (ctx, send) => {
      const answer = await send('POST', '/auth/admin/roles', { json: { name: 'clerks', scopes: ['runs:read'] } });
      ctx.roleId = answer.body.id;
      return answer;
    },
  },
  {
    route: 'PATCH /auth/admin/roles/{role_id}/scopes',
    send: (ctx, send) => send('PATCH', `/auth/admin/roles/${ctx.roleId}/scopes`, { json: { add: ['runs:control'] } }),
  },
  {
    route: 'POST /auth/admin/users',
    send: async (ctx, send) => {
      const answer = await send('POST', '/auth/admin/users', { json: { email: 'clerk@example.com', password: PASSWORD } });
      ctx.userId = answer.body.id;
      return answer;
    },
  },
  {
    route: 'PATCH /auth/admin/users/{user_id}',
    send: (ctx, send) => send('PATCH', `/auth/admin/users/${ctx.userId}`, { json: { password: `${PASSWORD} again` } }),
  },
  {
    route: 'POST /auth/admin/users/{user_id}/roles/{role_id}',
    send: (ctx, send) => send('POST', `/auth/admin/users/${ctx.userId}/roles/${ctx.roleId}`),
  },
  {
    route: 'DELETE /auth/admin/users/{user_id}/roles/{role_id}',
    send: (ctx, send) => send('DELETE', `/auth/admin/users/${ctx.userId}/roles/${ctx.roleId}`),
  },
  { route: 'DELETE /auth/admin/users/{user_id}', send: (ctx, send) => send('DELETE', `/auth/admin/users/${ctx.userId}`) },
  { route: 'POST /admin/erasure', send: (ctx, send) => send('POST', '/admin/erasure', { json: { subject_type: 'user', id: ctx.userId } }) },
  { route: 'DELETE /auth/admin/roles/{role_id}', send: (ctx, send) => send('DELETE', `/auth/admin/roles/${ctx.roleId}`) },
  { route: 'PUT /auth/admin/federation/{name}', send: (_ctx, send) => send('PUT', '/auth/admin/federation/partner', { json: partner }) },
  { route: 'DELETE /auth/admin/federation/{name}', send: (_ctx, send) => send('DELETE', '/auth/admin/federation/partner') },
  { route: 'POST /api/artifacts', send: (_ctx, send) => send('POST', '/api/artifacts', { json: { name: 'notes', type: 'prompt', content: 'hello' } }) },
  { route: 'POST /api/workflows/quick/runs', send: (_ctx, send) => send('POST', '/api/workflows/quick/runs', { json: { note: 'quick' } }) },
  { route: 'POST /api/ticks', send: (_ctx, send) => send('POST', '/api/ticks?wait=false', { json: { note: 'by hand' } }) },
  { route: 'POST /api/workflows/ticks/runs', send: (_ctx, send) => send('POST', '/api/workflows/ticks/runs?wait=false', { json: { note: 'by name' } }) },
  {
    route: 'POST /api/t/review',
    send: async (ctx, send) => {
      const answer = await send('POST', '/api/t/review?wait=false', { json: { subject: 'first' } });
      ctx.reviewRun = answer.body.id;
      return answer;
    },
  },
  {
    route: 'POST /api/workflows/review/runs',
    send: async (ctx, send) => {
      const answer = await send('POST', '/api/workflows/review/runs?wait=false', { json: { subject: 'second' } });
      ctx.otherReviewRun = answer.body.id;
      return answer;
    },
  },
  {
    route: 'POST /api/approvals/{id}',
    send: async (ctx, send) => send('POST', `/api/approvals/${await pendingApproval(send, ctx.reviewRun!)}`, { json: { decision: 'approve' } }),
  },
  {
    route: 'POST /api/runs/{id}/human/{agent_id}',
    send: async (ctx, send) => {
      await pendingApproval(send, ctx.otherReviewRun!);
      return send('POST', `/api/runs/${ctx.otherReviewRun}/human/confirm`, { json: { decision: 'reject' } });
    },
  },
  {
    route: 'POST /api/runs/{id}/fork',
    // From its first step: every run has reached it, so the fork never waits on the original's progress.
    send: (ctx, send) => send('POST', `/api/runs/${ctx.reviewRun}/fork`, { json: { from_step: 'confirm' } }),
  },
  {
    route: 'POST /api/workflows/slow/runs',
    send: async (ctx, send) => {
      const answer = await send('POST', '/api/workflows/slow/runs?wait=false', { json: {} });
      return answer;
    },
  },
  {
    route: 'POST /api/t/slow',
    send: async (ctx, send) => {
      const answer = await send('POST', '/api/t/slow?wait=false', { json: { note: 'to control' } });
      ctx.slowRun = answer.body.id;
      return answer;
    },
  },
  { route: 'POST /api/runs/{id}/pause', send: (ctx, send) => send('POST', `/api/runs/${ctx.slowRun}/pause`) },
  { route: 'POST /api/runs/{id}/steer', send: (ctx, send) => send('POST', `/api/runs/${ctx.slowRun}/steer`, { json: { message: 'hurry' } }) },
  { route: 'POST /api/runs/{id}/resume', send: (ctx, send) => send('POST', `/api/runs/${ctx.slowRun}/resume`) },
  { route: 'POST /admin/runs/{id}/hold', send: (ctx, send) => send('POST', `/admin/runs/${ctx.slowRun}/hold`, { json: { reason: 'litigation' } }) },
  { route: 'DELETE /admin/runs/{id}/hold', send: (ctx, send) => send('DELETE', `/admin/runs/${ctx.slowRun}/hold`) },
  { route: 'POST /api/runs/{id}/abort', send: (ctx, send) => send('POST', `/api/runs/${ctx.slowRun}/abort`, { json: { reason: 'done testing' } }) },
  { route: 'PATCH /admin/schedules/{workflow}/{id}', send: (_ctx, send) => send('PATCH', '/admin/schedules/ticks/each_second', { json: { paused: true } }) },
  { route: 'POST /admin/schedules/{workflow}/{id}/run', send: (_ctx, send) => send('POST', '/admin/schedules/ticks/each_second/run'), engineActor: SCHEDULE },
  {
    route: 'POST /admin/schedules/{workflow}/{id}/backfill',
    send: (_ctx, send) => send('POST', '/admin/schedules/ticks/each_second/backfill', { json: { from: '2025-01-01T00:00:00Z', to: '2025-01-01T00:00:02Z' } }),
    engineActor: SCHEDULE,
  },
  { route: 'POST /admin/audit/checkpoints', send: (_ctx, send) => send('POST', '/admin/audit/checkpoints') },
  // Before the model's version is toggled off (its routes go with it).
  {
    route: 'POST /models/note/',
    send: async (ctx, send) => {
      const answer = await send('POST', '/models/note/', { json: { title: 'first' } });
      ctx.noteId = answer.body.id;
      return answer;
    },
  },
  { route: 'PATCH /models/note/{id}', send: (ctx, send) => send('PATCH', `/models/note/${ctx.noteId}`, { json: { title: 'second' } }) },
  { route: 'DELETE /models/note/{id}', send: (ctx, send) => send('DELETE', `/models/note/${ctx.noteId}`) },
  { route: 'PATCH /admin/workflows/{name}/{version}/toggle', send: (_ctx, send) => send('PATCH', '/admin/workflows/slow/v1/toggle') },
  {
    route: 'POST /admin/workflows/{name}/{version}/fork',
    send: (_ctx, send) => send('POST', '/admin/workflows/review/v1/fork', { json: { new_version: 'v2' } }),
  },
  { route: 'PATCH /admin/models/{name}/{version}/toggle', send: (_ctx, send) => send('PATCH', '/admin/models/Note/v1/toggle') },
  { route: 'POST /admin/models/{name}/{version}/fork', send: (_ctx, send) => send('POST', '/admin/models/Note/v1/fork', { json: { new_version: 'v2' } }) },
  {
    route: 'POST /auth/refresh',
    send: async (ctx, send) => {
      const answer = await send('POST', '/auth/refresh');
      ctx.adminToken = answer.body.access_token;
      return answer;
    },
  },
  { route: 'POST /auth/logout', send: (_ctx, send) => send('POST', '/auth/logout') },
];

interface StoredMetadata {
  actor?: Actor;
  source?: string;
  request_id?: string;
}

describe('actor metadata on every write route', function () {
  this.timeout(180_000);
  let service: Service;
  let db: pg.Pool;
  const ctx = {} as Context;

  before(async () => {
    const projectDir = copyProject(SCHEDULE_PROJECT);
    mkdirSync(path.join(projectDir, 'models'));
    for (const [file, text] of Object.entries(FILES)) writeFileSync(path.join(projectDir, file), text);
    service = await startTestService({ projectDir, env: { SVC_SCHEDULE_CLAIM_INTERVAL_MS: '200' } });
    db = new pg.Pool({ connectionString: service.kernel.database.url, max: 2 });
  });
  after(async () => {
    await service?.close();
    await db?.end();
  });

  async function metadataOfRequest(requestId: string): Promise<{ type: string; metadata: StoredMetadata }[]> {
    const { rows } = await db.query(`SELECT type, metadata FROM events WHERE metadata->>'request_id' = $1 ORDER BY global_position`, [requestId]);
    return rows;
  }

  it('has an entry for every write route of /openapi.json, and each leaves events naming actor, source and request id', async () => {
    const doc = (await call(service.url, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    const tabled = TABLE.map((entry) => entry.route);
    expect(
      documented.filter((route) => !tabled.includes(route)),
      'write routes without an entry',
    ).to.deep.equal([]);
    expect(
      tabled.filter((route) => !documented.includes(route)),
      'entries of no documented route',
    ).to.deep.equal([]);

    for (const [index, entry] of TABLE.entries()) {
      const requestId = `actors-${index}`;
      const send: Send = (method, path, options = {}) => {
        const token = options.token === null ? undefined : (options.token ?? ctx.adminToken);
        return call(service.url, method, path, {
          headers: { 'x-request-id': requestId },
          ...(token !== undefined ? { token } : {}),
          ...(options.json !== undefined ? { json: options.json } : {}),
          ...(options.form !== undefined ? { form: options.form } : {}),
        });
      };
      const answer = await entry.send(ctx, send);
      expect(answer.status, `${entry.route}: ${JSON.stringify(answer.body)}`).to.be.within(200, 299);
      expect(answer.headers.get('x-request-id')).to.equal(requestId);
      const events = await metadataOfRequest(requestId);
      if (entry.leavesNoEvent) {
        expect(events, `${entry.route} (${entry.leavesNoEvent})`).to.deep.equal([]);
        continue;
      }
      const actor = (entry.actor ?? admin)(ctx, answer);
      expect(
        events.filter((e) => e.metadata.source === 'http'),
        `${entry.route}: events from its request`,
      ).to.not.be.empty;
      for (const { type, metadata } of events) {
        // The engine's events of a run the request started (or resumed) carry its request id too.
        expect(['http', 'executor'], `${entry.route}: the source of ${type}`).to.include(metadata.source);
        const expected = metadata.source === 'executor' ? (entry.engineActor ?? actor) : actor;
        expect(metadata.actor, `${entry.route}: the actor of ${type} (${metadata.source})`).to.deep.equal(expected);
      }
    }
  });

  it("names the run's principal, source executor, on what the engine appends for a run", async () => {
    const { rows } = await db.query<{ type: string; metadata: StoredMetadata }>(
      `SELECT type, metadata FROM events WHERE stream_id = $1 ORDER BY stream_position`,
      [`run-${await runOf('review', 'first')}`],
    );
    const adminActor = admin(ctx);
    expect(rows[0]).to.deep.include({ type: 'run_started' });
    expect(rows[0]!.metadata).to.deep.include({ actor: adminActor, source: 'http' });
    const engine = rows.filter((row) => row.metadata.source === 'executor');
    expect(engine.map((row) => row.type)).to.include('step_started');
    for (const row of engine) expect(row.metadata.actor, row.type).to.deep.equal(adminActor);
  });

  it('names the schedule, source scheduler, on the runs its ticks start', async () => {
    const schedule = { type: 'schedule', id: 'ticks/each_second' };
    let started: { metadata: StoredMetadata; stream_id: string } | undefined;
    await eventually(async () => {
      const { rows } = await db.query(
        `SELECT stream_id, metadata FROM events WHERE type = 'run_started' AND data->'payload'->>'trigger' = 'schedule' AND NOT metadata ? 'request_id' ORDER BY global_position LIMIT 1`,
      );
      started = rows[0];
      return started !== undefined;
    }, 30_000);
    expect(started, 'a scheduled run').to.not.equal(undefined);
    expect(started!.metadata).to.deep.include({ actor: schedule, source: 'scheduler' });
    const { rows } = await db.query<{ metadata: StoredMetadata }>(`SELECT metadata FROM events WHERE stream_id = $1 AND stream_position > 1`, [
      started!.stream_id,
    ]);
    for (const row of rows) expect(row.metadata).to.deep.include({ actor: schedule, source: 'executor' });
  });

  it('names the caller with source mcp and grpc for runs started over MCP and gRPC-Web, in the request', async () => {
    const token = await login(service.url, 'root@example.com', PASSWORD);
    const mcp = new McpClient({ name: 'actors-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'over-mcp' } },
      }),
    );
    try {
      const tool = await mcp.callTool({ name: 'quick', arguments: { note: 'over mcp' } });
      expect(tool.isError ?? false, JSON.stringify(tool)).to.equal(false);
    } finally {
      await mcp.close();
    }
    const started = async (note: string) =>
      (await db.query(`SELECT metadata FROM events WHERE type = 'run_started' AND data->'payload'->'input'->>'note' = $1`, [note])).rows[0]?.metadata;
    expect(await started('over mcp')).to.deep.equal({ actor: admin(ctx), source: 'mcp', request_id: 'over-mcp' });

    let runId = '';
    for await (const { runId: id } of runOverGrpcWeb(service.url, 'quick', { note: 'over grpc' }, token)) runId = id;
    const grpcStarted = await started('over grpc');
    expect(grpcStarted).to.deep.include({ actor: admin(ctx), source: 'grpc' });
    expect(grpcStarted.request_id, 'the gRPC call is a request too').to.be.a('string');
    const { rows } = await db.query(`SELECT metadata FROM events WHERE stream_id = $1 AND stream_position > 1`, [`run-${runId}`]);
    expect(rows).to.not.be.empty;
    for (const row of rows) expect(row.metadata).to.deep.include({ actor: admin(ctx), source: 'executor', request_id: grpcStarted.request_id });
  });

  async function runOf(workflow: string, subject: string): Promise<string> {
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM svc_runs WHERE workflow = $1 AND input->>'subject' = $2`, [workflow, subject]);
    return rows[0]!.id;
  }
});
