// Fault injection on outside peers: an API, an LLM (the OpenAI wire protocol) and an MCP server (the
// MCP SDK's server) on loopback that answer, stall past the step's timeout, or reset the connection,
// under many runs at once. Each run ends within its timeout and retries (no hang): an answer completes
// it, a stalled or dead peer takes the error route after the documented attempts, the peer is called
// exactly as often as the journal and docs say, and the invariants hold.
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { openPool } from '../durability/helpers.js';
import { FakeOpenAi } from '../agents/support/fakeOpenAi.js';
import { McpHttpServer } from '../agents/support/mcpHttpServer.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { PROFILE } from './profile.js';

const PEER_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'peer');
const MODES = ['ok', 'slow', 'dead'] as const;
type Mode = (typeof MODES)[number];
/** Requests per model call the `peer` AgentModel allows: max_retries (1) + 1. */
const MODEL_REQUESTS = 2;

/** The peer: `/ok` answers, `/slow` never does, `/dead` resets the connection; counts calls per tag (an MCP client's per path). */
function startPeer(hits: Map<string, number>): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const tag = (JSON.parse(body) as { tag?: string }).tag ?? `mcp:${req.url}`;
      hits.set(tag, (hits.get(tag) ?? 0) + 1);
      if (req.url === '/dead') req.socket.destroy();
      else if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: tag }));
      // `/slow`: left hanging; the step's timeout ends it.
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** The peer project with its MCP artifacts pointing at the live server and at the resetting peer. */
function peerProject(liveUrl: string, deadUrl: string): string {
  const artifact = (name: string, url: string) =>
    `kind: Artifact\nmetadata: {name: ${name}, version: "1", description: MCP peer of the fault suite.}\nspec:\n  type: mcp\n  content:\n    url: ${url}\n`;
  return copyProject(PEER_PROJECT, {
    'artifacts/live_tools.yaml': artifact('live_tools', liveUrl),
    'artifacts/dead_tools.yaml': artifact('dead_tools', deadUrl),
  });
}

describe(`faults (${PROFILE.name}): slow and dead peers`, function () {
  this.timeout(PROFILE.settleMs + 60_000);
  let db: pg.Pool;
  let service: ServiceProcess;
  let peer: Server;
  let peerUrl: string;
  let token: string;
  const hits = new Map<string, number>();
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  const diagnostics = () => service.output.slice(-3000);

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    peer = await startPeer(hits);
    peerUrl = `http://127.0.0.1:${(peer.address() as { port: number }).port}`;
    await Promise.all([fake.start(), mcp.start()]);
    service = await ServiceProcess.start(databaseUrl, peerProject(mcp.url, `${peerUrl}/dead`), { SVC_LLM_BASE_URL: fake.baseUrl });
    ({ token } = await bootstrapAdmin(service.url));
  });
  after(async () => {
    await killAllServices();
    peer?.closeAllConnections();
    peer?.close();
    await Promise.all([fake.stop(), mcp.stop()]);
    await db?.end();
  });

  /** PROFILE.runsInFlight runs at once, modes in turn, tagged `<prefix>-<mode>-<i>`; checks each answer (201 for ok, else 502). */
  async function runAll(prefix: string, request: (mode: Mode, tag: string, i: number) => [string, Record<string, unknown>]) {
    const acked = new Acknowledged();
    const runs = await Promise.all(
      Array.from({ length: PROFILE.runsInFlight }, async (_, i) => {
        const mode = MODES[i % MODES.length]!;
        const tag = `${prefix}-${mode}-${i}`;
        const [route, json] = request(mode, tag, i);
        return { mode, tag, i, result: await call(service.url, 'POST', route, { token, json: { ...json, tag } }) };
      }),
    );
    const wentOn = runs.filter(({ result }) => result.status === 202);
    for (const { mode, tag, result } of runs) {
      acked.runIds.add(result.headers.get('x-svc-run-id')!);
      // A drive that lost its (1.5 s) lease on a starved machine answers 202 between attempts; the run goes on elsewhere.
      if (result.status === 202) expect(result.body.status, `${tag}: ${JSON.stringify(result.body)}`).to.equal('waiting_retry');
      else expect(result.status, `${tag}: ${JSON.stringify(result.body)}`).to.equal(mode === 'ok' ? 201 : 502);
    }
    await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics });
    // Their outcome is the output of the Response step they ended in.
    for (const { result } of wentOn) result.body = (await call(service.url, 'GET', `/api/runs/${result.body.id}`, { token })).body.output;
    if (wentOn.length > 0) console.log(`      ${wentOn.length} sync triggers answered 202 while their run waited for a retry`);
    return runs;
  }

  /** Journaled attempts of `stepId` per run, by the input's tag, with the failed attempts' errors. */
  async function attemptsByTag(stepId: string): Promise<Map<string, { attempts: number; failed: string[] }>> {
    const { rows } = await db.query<{ tag: string; attempts: number; failed: string[] | null }>(
      `SELECT s.data->'payload'->'input'->>'tag' AS tag, count(e.*)::int AS attempts,
              array_agg(concat(e.data->'payload'->'error'->>'name', ': ', e.data->'payload'->'error'->>'message')) FILTER (WHERE e.type = 'step_attempt_failed') AS failed
         FROM events s JOIN events e ON e.stream_id = s.stream_id AND e.type IN ('step_attempt_failed', 'step_completed', 'step_failed') AND e.data->>'agent_id' = $1
        WHERE s.type = 'run_started' GROUP BY 1`,
      [stepId],
    );
    return new Map(rows.map((r) => [r.tag, { attempts: r.attempts, failed: r.failed ?? [] }]));
  }

  /** Two attempts for a stalled or dead peer; one for an answer, or two when a loaded machine let the first time out. */
  function expectAttempts(mode: Mode, tag: string, journaled: { attempts: number; failed: string[] } | undefined): number {
    expect(journaled, `${tag}: journaled`).to.not.equal(undefined);
    const { attempts, failed } = journaled!;
    if (mode !== 'ok' || attempts === 1) expect(attempts, `${tag}: journaled attempts`).to.equal(mode === 'ok' ? 1 : 2);
    else expect(failed.length === 1 && /time/i.test(failed[0]!), `${tag}: ${failed.join(', ')}`).to.equal(true);
    return attempts;
  }

  it(`${PROFILE.runsInFlight} runs against an API that answers, stalls or resets: each ends on its route, calls match the journal`, async () => {
    const runs = await runAll('api', (mode) => ['/api/ask', { api_url: `${peerUrl}/${mode}` }]);
    for (const { mode, tag, result } of runs) if (mode === 'ok') expect(result.body).to.deep.equal({ answer: tag, tag });
    // The peer saw each attempt the journal records, no more (retries: 1).
    const journaled = await attemptsByTag('ask');
    for (const { mode, tag } of runs) expect(hits.get(tag), `${tag}: calls the peer saw`).to.equal(expectAttempts(mode, tag, journaled.get(tag)));
  });

  it(`${PROFILE.runsInFlight} runs against an LLM that answers, stalls past its timeout or resets: the error route after max_retries + 1 requests`, async () => {
    const key = (tag: string) => `[${tag}]`;
    const runs = await runAll('llm', (mode, tag) => {
      // An answer twice over: a loaded machine may let the first request time out.
      const answer = { ok: { content: `thought ${tag}` }, slow: { delayMs: 120_000 }, dead: { reset: true } }[mode];
      fake.script(
        key(tag),
        Array.from({ length: MODEL_REQUESTS }, () => answer),
      );
      return ['/api/think', {}];
    });
    const { rows } = await db.query<{ tag: string; turns: number; signal: string }>(
      `SELECT s.data->'payload'->'input'->>'tag' AS tag, (SELECT count(*)::int FROM events t WHERE t.stream_id = s.stream_id AND t.type = 'llm_turn') AS turns,
              (SELECT e.data->'payload'->>'signal' FROM events e WHERE e.stream_id = s.stream_id AND e.type IN ('step_completed', 'step_failed') AND e.data->>'agent_id' = 'think') AS signal
         FROM events s WHERE s.type = 'run_started' AND s.data->'payload'->>'workflow' = 'think'`,
    );
    const journaled = new Map(rows.map((r) => [r.tag, r]));
    for (const { mode, tag, result } of runs) {
      const requests = fake.requestsFor(key(tag));
      if (mode === 'ok') {
        expect(result.body).to.deep.equal({ answer: `thought ${tag}`, tag });
        expect(
          requests.filter((r) => r.answered),
          `${tag}: one answer`,
        ).to.have.length(1);
        expect(journaled.get(tag)).to.include({ turns: 1, signal: 'default' });
        continue;
      }
      expect(result.body.error, tag).to.match(/^the model call failed/);
      expect(requests, `${tag}: the model call and its one retry`).to.have.length(MODEL_REQUESTS);
      expect(requests.some((r) => r.answered)).to.equal(false);
      expect(journaled.get(tag), 'no turn journaled for a model given up on').to.include({ turns: 0, signal: 'error' });
    }
  });

  it(`${PROFILE.runsInFlight} runs against an MCP server that answers, stalls past timeout_ms or is dead: the error route after the step's retry`, async () => {
    const deadBefore = hits.get('mcp:/dead') ?? 0;
    // The sleep tool tells runs apart by their ms: short for an answer, long past timeout_ms for a stall.
    const msOf = (mode: Mode, i: number) => (mode === 'slow' ? 120_000 + i : 10 + i);
    const runs = await runAll('mcp', (mode, _tag, i) => [mode === 'dead' ? '/api/tool-dead' : '/api/tool-live', { ms: msOf(mode, i) }]);
    const journaled = await attemptsByTag('call');
    let deadAttempts = 0;
    for (const { mode, tag, i, result } of runs) {
      const attempts = expectAttempts(mode, tag, journaled.get(tag));
      if (mode === 'ok') expect(result.body).to.deep.equal({ tag, result: 'woke up' });
      else expect(result.body.error, tag).to.match(/^MCP sleep failed/);
      if (mode === 'dead') {
        deadAttempts += attempts;
        continue;
      }
      // The timeout bounds the session's start too: an attempt timed out there (under load) never called the tool.
      const calls = mcp.calls.filter((c) => c.tool === 'sleep' && c.args.ms === msOf(mode, i)).length;
      expect(calls, `${tag}: tool calls, ${attempts} attempts`).to.be.within(mode === 'ok' ? 1 : 0, attempts);
    }
    // A dead server is reached once per attempt (its connection is reset before the session starts).
    expect((hits.get('mcp:/dead') ?? 0) - deadBefore, 'connections to the dead server').to.equal(deadAttempts);
  });
});
