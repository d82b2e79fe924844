// A run start whose journal write loses its database connection answers what happened: 503 with
// Retry-After and no run id when nothing was recorded, the run's state (202) when it was (it is resumed
// and completes, no failure journaled), and says so when a cut-off COMMIT leaves it unknown. Over HTTP
// (waiting, not waiting, SSE), gRPC-Web and MCP. Triggers on `events` end their own backend to lose
// the connection exactly where wanted, on the shared server (no restart needed).
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import pg from 'pg';
import { runOverGrpcWeb } from '../../src/client/grpc.js';
import { SvcClient, SvcRequestError } from '../../src/client/index.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, eventually, type Admin, type HttpResult } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { FIXTURES, journalOf, journalProblems } from './helpers.js';

const OUTAGE_PROJECT = `${FIXTURES}/outage`;
/** Text of the failures underneath that no answer may carry. */
const INTERNAL_TEXT = ['terminating connection', 'administrator command', 'ECONNREFUSED', 'Connection terminated', 'INSERT INTO', 'engine failure'];

describe('durability: a run start that loses its database connection', function () {
  this.timeout(60_000);
  let service: Service;
  let admin: Admin;
  let db: pg.Client;

  before(async () => {
    service = await startTestService({
      projectDir: OUTAGE_PROJECT,
      env: { SVC_RUN_LEASE_MS: '1500', SVC_RUN_CLAIM_INTERVAL_MS: '200', SVC_SYNC_TIMEOUT_MS: '15000' },
    });
    admin = await bootstrapAdmin(service.url);
    db = new pg.Client({ connectionString: service.kernel.database.url });
    await db.connect();
    await db.query(`
      CREATE FUNCTION end_own_backend() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
      -- 'doom': the journal write of the run fails (connection lost) before its COMMIT, every time.
      CREATE TRIGGER doom BEFORE INSERT ON events FOR EACH ROW
        WHEN (NEW.type = 'run_started' AND NEW.data->'payload'->'input'->>'tag' = 'doom') EXECUTE FUNCTION end_own_backend();
      -- 'unsure': the connection is lost inside COMMIT (a deferred trigger; the transaction rolls back).
      CREATE CONSTRAINT TRIGGER unsure AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
        WHEN (NEW.type = 'run_started' AND NEW.data->'payload'->'input'->>'tag' = 'unsure') EXECUTE FUNCTION end_own_backend();`);
  });
  after(async () => {
    await db?.end();
    await service?.close();
  });

  async function runEventCount(): Promise<number> {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE stream_type = 'run'`);
    return rows[0]!.n;
  }

  function expectNoInternalText(answer: unknown): void {
    const text = JSON.stringify(answer);
    for (const secret of INTERNAL_TEXT) expect(text, `the answer carries "${secret}"`).to.not.include(secret);
  }

  function expectUnavailable(result: HttpResult): void {
    expect(result.status, JSON.stringify(result.body)).to.equal(503);
    expect(result.body.code).to.equal('UNAVAILABLE');
    expect(Number(result.headers.get('retry-after')), 'Retry-After').to.be.greaterThan(0);
    expectNoInternalText(result.body);
  }

  it('answers 503 with Retry-After and no run id when nothing was recorded (waiting, not waiting, SSE), and leaves nothing behind', async () => {
    const before = await runEventCount();
    const input = { sleep_ms: 10, tag: 'doom' };
    const waited = await call(service.url, 'POST', '/api/outage', { token: admin.token, json: input });
    const notWaited = await call(service.url, 'POST', '/api/outage?wait=false', { token: admin.token, json: input });
    const streamed = await call(service.url, 'POST', '/api/outage', { token: admin.token, json: input, headers: { accept: 'text/event-stream' } });
    for (const [name, result] of Object.entries({ waited, notWaited, streamed })) {
      expectUnavailable(result);
      expect(result.headers.get('x-svc-run-id'), `${name}: no run id for a run that does not exist`).to.equal(null);
    }
    expect(await runEventCount(), 'no run event was written').to.equal(before);
  });

  it('gRPC-Web and MCP run starts say unavailable too, with no run and nothing behind', async () => {
    const before = await runEventCount();
    const grpcFailure = await (async () => {
      for await (const _ of runOverGrpcWeb(service.url, 'outage', { sleep_ms: 10, tag: 'doom' }, admin.token)) return 'a frame arrived';
      return 'the stream ended';
    })().catch((error: unknown) => error as { code?: number; rawMessage?: string; name?: string });
    expect(grpcFailure).to.include({ name: 'ConnectError', code: 14 }); // Code.Unavailable
    expectNoInternalText((grpcFailure as { rawMessage?: string }).rawMessage);
    // The client library reports it as the REST call would: a 503.
    const clientFailure = await new SvcClient({ baseUrl: service.url, token: admin.token })
      .execute('outage', { payload: { sleep_ms: 10, tag: 'doom' }, mode: 'grpc' })
      .catch((error: unknown) => error);
    expect(clientFailure).to.be.instanceOf(SvcRequestError);
    expect((clientFailure as SvcRequestError).status).to.equal(503);

    const mcp = new McpClient({ name: 'blip-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${admin.token}` } } }),
    );
    try {
      const result = await mcp.callTool({ name: 'outage', arguments: { sleep_ms: 10, tag: 'doom' } });
      expect(result.isError).to.equal(true);
      const body = JSON.parse((result.content as { text: string }[])[0]!.text) as Record<string, unknown>;
      expect(body).to.include({ code: 'UNAVAILABLE' });
      expect(body.retry_after_s).to.be.a('number');
      expect(body).to.not.have.property('run_id');
      expectNoInternalText(result);
    } finally {
      await mcp.close();
    }
    expect(await runEventCount(), 'no run event was written').to.equal(before);
  });

  it('a run cut off after it was journaled answers 202 with its state; it is resumed and completes with no failure journaled', async () => {
    await db.query(`
      CREATE SEQUENCE cut_once;
      CREATE FUNCTION end_own_backend_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF nextval('cut_once') = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid()); END IF; RETURN NEW; END $$;
      -- Once: the journal write carrying step two's completion loses its connection.
      CREATE TRIGGER cut BEFORE INSERT ON events FOR EACH ROW
        WHEN (NEW.type = 'step_completed' AND NEW.data->>'agent_id' = 'two') EXECUTE FUNCTION end_own_backend_once();`);
    try {
      const result = await call(service.url, 'POST', '/api/outage', { token: admin.token, json: { sleep_ms: 20, tag: 'cut' } });
      expect(result.status, JSON.stringify(result.body)).to.equal(202);
      const runId = result.headers.get('x-svc-run-id');
      expect(result.body.id).to.equal(runId);
      expect(result.body.status).to.equal('running');
      expectNoInternalText(result.body);

      const done = await eventually(
        async () => (await call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token })).body.status === 'completed',
        20_000,
        50,
      );
      expect(done.ok, 'the run was resumed and completed').to.equal(true);
      const pool = new pg.Pool({ connectionString: service.kernel.database.url, max: 1 });
      try {
        const journal = await journalOf(pool, runId!);
        expect(journalProblems(journal)).to.deep.equal([]);
        expect(journal.map((e) => e.type)).to.not.include('run_failed');
        expect(journal.filter((e) => e.type === 'step_completed').map((e) => e.step)).to.deep.equal(['one', 'save', 'two', 'respond']);
        const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM outage_entries WHERE tag = 'cut'`);
        expect(rows[0]!.n, 'the ModelOp record, once').to.equal(1);
      } finally {
        await pool.end();
      }
    } finally {
      await db.query('DROP TRIGGER cut ON events');
    }
  });

  it('a COMMIT cut off in flight answers 503 naming the run, which may or may not exist', async () => {
    for (const path of ['/api/outage?wait=false', '/api/outage']) {
      const result = await call(service.url, 'POST', path, { token: admin.token, json: { sleep_ms: 10, tag: 'unsure' } });
      expectUnavailable(result);
      const runId = result.headers.get('x-svc-run-id');
      expect(runId, `${path}: the run id the client can look up`).to.be.a('string');
      expect(result.body.detail).to.include(`/api/runs/${runId}`);
      // Here the COMMIT did not happen: the lookup the answer points to says 404.
      const lookup = await call(service.url, 'GET', `/api/runs/${runId}`, { token: admin.token });
      expect(lookup.status).to.equal(404);
    }
  });
});
