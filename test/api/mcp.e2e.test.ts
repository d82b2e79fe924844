// /mcp through the SDK's own Client over Streamable HTTP: the gates, per-caller tool listing, and
// tool calls that run workflows as the caller (completed, invalid arguments, waiting, failed).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, withDeadline, type Admin } from '../support/http.js';
import { journalOf } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { FIXTURE_PROJECT } from './helpers.js';

const MCP_EXPORTED = ['broken', 'echo', 'grouped', 'review', 'scoped'];
const SYNC_TIMEOUT_MS = 60_000;
/** Generous, yet a fourth of the sync wait: an answer within it did not wait that out. */
const ANSWER_DEADLINE_MS = 15_000;

describe('MCP export at /mcp', () => {
  let service: Service;
  let admin: Admin;
  const users: Record<'none' | 'basic' | 'grouper' | 'special', { id: string; token: string }> = {} as never;
  const clients: Client[] = [];

  async function connect(token: string | undefined): Promise<Client> {
    const mcp = new Client({ name: 'svc-api-tests', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), {
      requestInit: { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
    });
    await mcp.connect(transport);
    clients.push(mcp);
    return mcp;
  }
  async function connectFailure(token: string | undefined): Promise<unknown> {
    try {
      await connect(token);
    } catch (error) {
      return error;
    }
    return expect.fail('the MCP client connected');
  }
  const toolNames = async (mcp: Client) => (await mcp.listTools()).tools.map((t) => t.name).sort();
  const textOf = (result: any): any => JSON.parse((result.content as { type: string; text: string }[]).find((c) => c.type === 'text')!.text);

  before(async () => {
    // A sync wait longer than any call here may take: a call that answers came back because its run
    // finished or began waiting, never because the wait ran out.
    service = await startTestService({ projectDir: FIXTURE_PROJECT, env: { SVC_SYNC_TIMEOUT_MS: String(SYNC_TIMEOUT_MS) } });
    admin = await bootstrapAdmin(service.url);
    users.none = await createUser(service.url, admin.token, 'none@example.com', { nobody: ['runs:read'] });
    users.basic = await createUser(service.url, admin.token, 'basic@example.com', { mcp_basic: ['mcp:connect'] });
    users.grouper = await createUser(service.url, admin.token, 'grouper@example.com', { mcp_basic: ['mcp:connect'], apigroup: [] });
    users.special = await createUser(service.url, admin.token, 'special@example.com', { mcp_special: ['mcp:connect', 'api:special'] });
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await service?.close();
  });

  it('refuses a caller without a token (401) and one without mcp:connect (403)', async () => {
    const anonymous = await connectFailure(undefined);
    expect(anonymous).to.be.instanceOf(StreamableHTTPError);
    expect((anonymous as StreamableHTTPError).code).to.equal(401);
    const forged = await connectFailure('not-a-token');
    expect((forged as StreamableHTTPError).code).to.equal(401);
    const unscoped = await connectFailure(users.none.token);
    expect(unscoped).to.be.instanceOf(StreamableHTTPError);
    expect((unscoped as StreamableHTTPError).code).to.equal(403);
    // The same gates over plain HTTP, with the service's error body.
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const headers = { accept: 'application/json, text/event-stream' };
    const raw401 = await call(service.url, 'POST', '/mcp', { json: init, headers });
    expect(raw401.status).to.equal(401);
    expect(raw401.headers.get('www-authenticate')).to.equal('Bearer');
    expect(raw401.body).to.include({ code: 'UNAUTHENTICATED' });
    const raw403 = await call(service.url, 'POST', '/mcp', { json: init, headers, token: users.none.token });
    expect(raw403.status).to.equal(403);
    expect(raw403.body).to.include({ code: 'PERMISSION_DENIED' });
  });

  it('lists one tool per MCP-enabled workflow, described by its metadata and typed by its contract', async () => {
    const mcp = await connect(admin.token);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).to.deep.equal(MCP_EXPORTED);
    const echo = tools.find((t) => t.name === 'echo')!;
    expect(echo.description).to.equal('Echoes the text it is given.');
    expect(echo.inputSchema).to.deep.equal({
      type: 'object',
      properties: { text: { type: 'string' }, count: { type: ['integer', 'null'] } },
      required: ['text'],
      additionalProperties: false,
    });
    expect(tools.find((t) => t.name === 'review')!.inputSchema).to.deep.include({ required: ['subject'] });
    expect(tools.find((t) => t.name === 'broken')!.description).to.equal('Always fails.');
  });

  it('hides the workflows whose required_scope or required_group the caller lacks', async () => {
    expect(await toolNames(await connect(users.basic.token))).to.deep.equal(['broken', 'echo', 'review']);
    expect(await toolNames(await connect(users.grouper.token))).to.deep.equal(['broken', 'echo', 'grouped', 'review']);
    expect(await toolNames(await connect(users.special.token))).to.deep.equal(['broken', 'echo', 'review', 'scoped']);
    // A hidden tool cannot be called either, and nothing runs.
    const basic = await connect(users.basic.token);
    const hidden = await basic.callTool({ name: 'scoped', arguments: {} });
    expect(hidden.isError).to.equal(true);
    expect(textOf(hidden).message).to.equal('No tool named scoped');
    // A workflow without trigger.mcp.enabled is no tool, even for an admin.
    const notExported = await (await connect(admin.token)).callTool({ name: 'http_only', arguments: {} });
    expect(notExported.isError).to.equal(true);
    expect((await call(service.url, 'GET', '/api/runs?workflow=http_only', { token: admin.token })).body).to.deep.equal([]);
    expect((await call(service.url, 'GET', '/api/runs?workflow=scoped', { token: admin.token })).body).to.deep.equal([]);
    const allowed = await (await connect(users.special.token)).callTool({ name: 'scoped', arguments: {} });
    expect(allowed.isError ?? false, JSON.stringify(allowed)).to.equal(false);
    expect(allowed.structuredContent).to.deep.include({ status: 'completed' });
  });

  it('runs the workflow as the caller and answers {run_id, status, body}', async () => {
    const mcp = await connect(users.basic.token);
    const result = await mcp.callTool({ name: 'echo', arguments: { text: 'over mcp', count: 3 } });
    expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
    const structured = result.structuredContent as { run_id: string; status: string; body: unknown };
    expect(structured).to.have.keys('run_id', 'status', 'body');
    expect(structured.status).to.equal('completed');
    expect(structured.body).to.deep.equal({ said: 'over mcp', count: 3 });
    expect(structured.run_id).to.match(/^[0-9a-f-]{36}$/);
    expect(textOf(result)).to.deep.equal(structured);

    // The run is the caller's own: it shows in their list, and not in another non-admin's.
    const mine = await call(service.url, 'GET', '/api/runs', { token: users.basic.token });
    expect(mine.status).to.equal(200);
    const run = (mine.body as any[]).find((r) => r.id === structured.run_id);
    expect(run, JSON.stringify(mine.body)).to.deep.include({ workflow: 'echo', status: 'completed' });
    expect(run.input).to.deep.equal({ text: 'over mcp', count: 3 });
    const theirs = await call(service.url, 'GET', '/api/runs', { token: users.special.token });
    expect((theirs.body as any[]).map((r) => r.id)).to.not.include(structured.run_id);
    // The journal records the trigger and the caller's identity.
    const journal = await journalOf(service.url, admin.token, structured.run_id);
    const started = journal.find((event) => event.type === 'run_started');
    expect(started, JSON.stringify(journal)).to.be.an('object');
    expect(started.payload.trigger).to.equal('mcp');
    expect(started.payload.principal.user_id).to.equal(users.basic.id);
  });

  it('answers bad arguments with isError and the validation detail, and starts no run', async () => {
    const mcp = await connect(users.basic.token);
    const before = (await call(service.url, 'GET', '/api/runs?workflow=echo', { token: admin.token })).body.length;
    const result = await mcp.callTool({ name: 'echo', arguments: { count: 'three' } });
    expect(result.isError).to.equal(true);
    const error = textOf(result);
    expect(error.detail).to.be.an('array').that.is.not.empty;
    expect(error.detail.map((d: any) => d.loc.join('.')).join(' ')).to.include('text');
    expect(error.detail.some((d: any) => d.type === 'missing')).to.equal(true);
    expect((await call(service.url, 'GET', '/api/runs?workflow=echo', { token: admin.token })).body.length).to.equal(before);
  });

  it('answers a run that waits for a human with its run id and status waiting_human', async () => {
    const mcp = await connect(users.basic.token);
    const result = await withDeadline(
      mcp.callTool({ name: 'review', arguments: { subject: 'new laptop' } }),
      ANSWER_DEADLINE_MS,
      'the call returned when the run began waiting, not at the sync timeout',
    );
    expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
    const pending = result.structuredContent as { run_id: string; status: string; approval: any };
    expect(pending.status).to.equal('waiting_human');
    expect(pending.run_id).to.match(/^[0-9a-f-]{36}$/);
    expect(pending.approval).to.be.an('object').with.property('approval_id').that.is.a('string');
    const run = await call(service.url, 'GET', `/api/runs/${pending.run_id}`, { token: users.basic.token });
    expect(run.status, JSON.stringify(run.body)).to.equal(200);
    expect(run.body.status).to.equal('waiting_human');
  });

  it('answers a failing workflow with isError and the run id', async () => {
    const mcp = await connect(users.basic.token);
    const result = await mcp.callTool({ name: 'broken', arguments: {} });
    expect(result.isError).to.equal(true);
    const failed = textOf(result);
    expect(failed.status).to.equal('failed');
    expect(failed.error.message).to.include('failed on purpose');
    const run = await call(service.url, 'GET', `/api/runs/${failed.run_id}`, { token: users.basic.token });
    expect(run.body.status).to.equal('failed');
  });

  it('stops listing a workflow once its version is toggled off', async () => {
    const admin$ = client(service.url, admin.token);
    expect((await admin$.patch('/admin/workflows/echo/v1/toggle')).body.enabled).to.equal(false);
    try {
      expect(await toolNames(await connect(users.basic.token))).to.deep.equal(['broken', 'review']);
    } finally {
      expect((await admin$.patch('/admin/workflows/echo/v1/toggle')).body.enabled).to.equal(true);
    }
  });
});
