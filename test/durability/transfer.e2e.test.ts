// `svc runs export|import|replay` end to end: a run moved to a fresh database reads back byte for byte,
// unfinished runs need --resume (and then continue there), and replay answers from the journal
// (no outside call) and notices changed code and definitions, HumanInTheLoop steps included.
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type pg from 'pg';
import { AGENT_KEPT, replayRun } from '../../src/runs/engine/replay.js';
import type { RunEvent } from '../../src/runs/events.js';
import type { StepDeps } from '../../src/runs/engine/steps/types.js';
import type { Service } from '../../src/main.js';
import { forkedWorkflow } from '../../src/app/project.js';
import { HITL_PROJECT } from '../approvals/helpers.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { copyProject } from '../support/projects.js';
import { waitForStatus } from '../support/runs.js';
import { startTestService } from '../support/service.js';
import { PROCESS_SIGNING_KEY, runCli, type CliResult } from '../support/serviceProcess.js';
import { openPool, REPLAY_PROJECT } from './helpers.js';

const CLI_TIMEOUT_MS = 60_000;

/** The outside API the `ask` step calls: answers `{answer}` and counts what it receives. */
async function startFakeApi(): Promise<{ url: string; requests: unknown[]; server: Server }> {
  const requests: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      requests.push(JSON.parse(body || 'null'));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: 'forty-two' }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/lookup`, requests, server };
}

/** An answer's bytes, nothing parsed or normalized. */
async function rawGet(url: string, token: string, accept = 'application/json'): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept }, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

/** GET /api/runs/{id} and the journal over SSE (`follow=false`), as served. */
async function readBack(service: Service, token: string, runId: string) {
  const run = await rawGet(`${service.url}/api/runs/${runId}`, token);
  const events = await rawGet(`${service.url}/api/runs/${runId}/events?follow=false`, token, 'text/event-stream');
  expect(run.status, run.text).to.equal(200);
  expect(events.status, events.text).to.equal(200);
  return { run: run.text, events: events.text };
}

const workDir = mkdtempSync(path.join(tmpdir(), 'svc-transfer-'));

async function cli(args: string[], databaseUrl: string, projectDir: string): Promise<CliResult> {
  return runCli(args, { DATABASE_URL: databaseUrl, SVC_PROJECT_DIR: projectDir }, CLI_TIMEOUT_MS);
}

/** `svc runs export` into a file; answers its path. */
async function exportToFile(runId: string, databaseUrl: string, projectDir: string): Promise<string> {
  const exported = await cli(['runs', 'export', runId], databaseUrl, projectDir);
  expect(exported.code, exported.stderr).to.equal(0);
  const file = path.join(workDir, `${runId}.json`);
  writeFileSync(file, exported.stdout);
  return file;
}

async function eventTotals(db: pg.Pool): Promise<{ events: number; last: number }> {
  const { rows } = await db.query<{ events: number; last: number }>(
    'SELECT count(*)::int AS events, coalesce(max(global_position), 0)::int AS last FROM events',
  );
  return rows[0]!;
}

describe('runs: export, import and replay through the CLI', function () {
  this.timeout(180_000);
  const services: Service[] = [];
  const pools: pg.Pool[] = [];
  let api: Awaited<ReturnType<typeof startFakeApi>>;
  let originalUrl: string;
  let original: Service;
  let admin: Admin;
  let runId: string;
  let exportFile: string;

  async function serve(databaseUrl: string, projectDir: string): Promise<Service> {
    const service = await startTestService({ databaseUrl, projectDir, env: { SVC_SIGNING_KEY: PROCESS_SIGNING_KEY, SVC_RUN_CLAIM_INTERVAL_MS: '200' } });
    services.push(service);
    return service;
  }

  before(async function () {
    this.timeout(60_000);
    api = await startFakeApi();
    originalUrl = await createTestDatabase();
    original = await serve(originalUrl, REPLAY_PROJECT);
    admin = await bootstrapAdmin(original.url);
    const result = await call(original.url, 'POST', '/api/lookup', { token: admin.token, json: { n: 21, api_url: api.url } });
    expect(result.status, JSON.stringify(result.body)).to.equal(201);
    expect(result.body).to.equal('forty-two:42');
    runId = result.headers.get('x-svc-run-id')!;
    expect(api.requests).to.deep.equal([{ value: 42 }]);
  });

  after(async () => {
    for (const service of services) await service.close().catch(() => undefined);
    for (const pool of pools) await pool.end().catch(() => undefined);
    api?.server.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('export -> import into a fresh database: GET /api/runs/{id} and its SSE journal read back byte-identical', async () => {
    exportFile = await exportToFile(runId, originalUrl, REPLAY_PROJECT);
    expect(JSON.parse(readFileSync(exportFile, 'utf8'))).to.include({ format: 'svc.run/v1' });
    const before = await readBack(original, admin.token, runId);

    const freshUrl = await createTestDatabase();
    const imported = await cli(['runs', 'import', exportFile], freshUrl, REPLAY_PROJECT);
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stdout).to.equal(`imported run ${runId} (completed)\n`);

    const copy = await serve(freshUrl, REPLAY_PROJECT);
    const copyAdmin = await bootstrapAdmin(copy.url);
    const after = await readBack(copy, copyAdmin.token, runId);
    expect(after.run).to.equal(before.run);
    expect(after.events).to.equal(before.events);
    expect(JSON.parse(after.run)).to.include({ id: runId, status: 'completed', output: 'forty-two:42' });
    // Finished: nothing on the fresh database runs it again.
    expect(api.requests).to.have.length(1);

    // A second import of the same file is refused and writes nothing.
    const db = openPool(freshUrl);
    pools.push(db);
    // The import is the CLI's doing (BEYOND 3.1), and says it is one.
    const imports = await db.query(`SELECT DISTINCT metadata FROM events WHERE stream_id = $1`, [`run-${runId}`]);
    expect(imports.rows.map((r) => r.metadata)).to.deep.equal([{ actor: { type: 'system', id: 'cli' }, source: 'cli', imported: true }]);
    const totals = await eventTotals(db);
    const again = await cli(['runs', 'import', exportFile], freshUrl, REPLAY_PROJECT);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.equal(`svc: CONFLICT: Run ${runId} is already in this database\n`);
    expect(await eventTotals(db)).to.deep.equal(totals);
    expect((await readBack(copy, copyAdmin.token, runId)).events).to.equal(before.events);
  });

  it('the export is signed: `svc runs verify` checks it offline with the JWKS alone; a modified export is refused by verify and import', async () => {
    const document = JSON.parse(readFileSync(exportFile, 'utf8'));
    expect(document.signature).to.match(/^[\w-]+\.\.[\w-]+$/);
    expect(document.events.every((e: { hash: string }) => /^[0-9a-f]{64}$/.test(e.hash))).to.equal(true);
    const jwksFile = path.join(workDir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify((await call(original.url, 'GET', '/auth/jwks.json')).body));
    // Nothing but the export and the public keys: no database, and with --jwks no setting is read.
    const offline = (args: string[]) => runCli(['runs', 'verify', ...args], {}, CLI_TIMEOUT_MS);
    const verified = await offline([exportFile, '--jwks', jwksFile]);
    expect(verified.code, verified.stderr).to.equal(0);
    expect(JSON.parse(verified.stdout)).to.deep.include({ ok: true, events: document.events.length, recomputed: document.events.length, problem: null });

    const modified = path.join(workDir, 'modified.json');
    document.events[1].payload = { ...document.events[1].payload, forged: true };
    writeFileSync(modified, JSON.stringify(document));
    const refused = await offline([modified, '--jwks', jwksFile]);
    expect(refused.code).to.equal(1);
    expect(JSON.parse(refused.stdout)).to.deep.include({ ok: false, problem: 'signature does not verify: the export was changed after signing' });
    const freshUrl = await createTestDatabase();
    const imported = await cli(['runs', 'import', modified], freshUrl, REPLAY_PROJECT);
    expect(imported.code).to.equal(1);
    expect(imported.stderr).to.match(/^svc: BAD_REQUEST: The export does not verify \(signature does not verify/);
    const forced = await cli(['runs', 'import', modified, '--unverified'], freshUrl, REPLAY_PROJECT);
    expect(forced.code, forced.stderr).to.equal(0);
  });

  it('replay against the original database: every step SAME, exit 0, and the API is not called', async () => {
    const calls = api.requests.length;
    const replayed = await cli(['runs', 'replay', runId], originalUrl, REPLAY_PROJECT);
    expect(replayed.code, replayed.stderr).to.equal(0);
    expect(replayed.stdout).to.equal(
      ['SAME double (Functional)', 'SAME ask (APICall)', 'SAME label (Functional)', '3 steps: 3 same, 0 different, 0 kept', ''].join('\n'),
    );
    expect(api.requests, 'the recorded answer was used').to.have.length(calls);
  });

  it('replay with a changed runner: that step is DIFF and the exit code 1', async () => {
    const changed = copyProject(REPLAY_PROJECT);
    writeFileSync(
      path.join(changed, 'nodes/label.ts'),
      'export default function label(ctx: { answer: string; doubled: number }): { label: string } {\n  return { label: `${ctx.answer}/${ctx.doubled}` };\n}\n',
    );
    const calls = api.requests.length;
    const replayed = await cli(['runs', 'replay', runId], originalUrl, changed);
    expect(replayed.code, replayed.stderr).to.equal(1);
    expect(replayed.stdout.split('\n')).to.deep.equal([
      'SAME double (Functional)',
      'SAME ask (APICall)',
      'DIFF label (Functional): context changes differ',
      '3 steps: 2 same, 1 different, 0 kept',
      '',
    ]);
    expect(api.requests).to.have.length(calls);
  });

  describe('a run with a HumanInTheLoop step', () => {
    let hitlUrl: string;
    let hitl: Service;
    let hitlAdmin: Admin;
    let leaveRun: { id: string; approval: { approval_id: string } };
    let waitingFile: string;

    before(async function () {
      this.timeout(60_000);
      hitlUrl = await createTestDatabase();
      hitl = await serve(hitlUrl, HITL_PROJECT);
      hitlAdmin = await bootstrapAdmin(hitl.url);
      const started = await call(hitl.url, 'POST', '/api/leave', { token: hitlAdmin.token, json: { days: 3 } });
      expect(started.status, JSON.stringify(started.body)).to.equal(202);
      expect(started.body.status).to.equal('waiting_human');
      leaveRun = started.body;
      waitingFile = await exportToFile(leaveRun.id, hitlUrl, HITL_PROJECT);
    });

    it('an unfinished run is refused (400-style, naming --resume) and nothing is written', async () => {
      const freshUrl = await createTestDatabase();
      const db = openPool(freshUrl);
      pools.push(db);
      const totals = await eventTotals(db);
      const refused = await cli(['runs', 'import', waitingFile], freshUrl, HITL_PROJECT);
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.match(new RegExp(`^svc: BAD_REQUEST: Run ${leaveRun.id} is waiting_human, not finished: .*Pass --resume`));
      expect(await eventTotals(db)).to.deep.equal(totals);
    });

    it('with --resume it is imported, and a service on that database continues it', async () => {
      const freshUrl = await createTestDatabase();
      const imported = await cli(['runs', 'import', '--resume', waitingFile], freshUrl, HITL_PROJECT);
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.stdout).to.equal(`imported run ${leaveRun.id} (waiting_human)\n`);
      const copy = await serve(freshUrl, HITL_PROJECT);
      const copyAdmin = await bootstrapAdmin(copy.url);
      const waiting = await call(copy.url, 'GET', `/api/runs/${leaveRun.id}`, { token: copyAdmin.token });
      expect(waiting.body).to.deep.include({ status: 'waiting_human', approval: leaveRun.approval });
      const decided = await call(copy.url, 'POST', `/api/approvals/${leaveRun.approval.approval_id}`, {
        token: copyAdmin.token,
        json: { decision: 'approve', values: { granted_days: 2 } },
      });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      const done = await waitForStatus(copy.url, copyAdmin.token, leaveRun.id, ['completed'], 15_000);
      expect(done.output).to.deep.include({ decision: 'approve', values: { granted_days: 2 }, decided_by: copyAdmin.userId });
    });

    it('replay of the approved run: the HumanInTheLoop step is SAME; with another output_key it is DIFF', async () => {
      const decided = await call(hitl.url, 'POST', `/api/approvals/${leaveRun.approval.approval_id}`, {
        token: hitlAdmin.token,
        json: { decision: 'approve', values: { granted_days: 3 }, comment: 'enjoy' },
      });
      expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
      await waitForStatus(hitl.url, hitlAdmin.token, leaveRun.id, ['completed'], 15_000);

      const replayed = await cli(['runs', 'replay', leaveRun.id], hitlUrl, HITL_PROJECT);
      expect(replayed.code, replayed.stderr).to.equal(0);
      expect(replayed.stdout).to.equal('SAME ask (HumanInTheLoop)\n1 steps: 1 same, 0 different, 0 kept\n');

      const changed = copyProject(HITL_PROJECT);
      const leaveFile = path.join(changed, 'workflows/leave.yaml');
      writeFileSync(leaveFile, readFileSync(leaveFile, 'utf8').replace('output_key: answer', 'output_key: reply'));
      const differing = await cli(['runs', 'replay', leaveRun.id], hitlUrl, changed);
      expect(differing.code, differing.stderr).to.equal(1);
      expect(differing.stdout).to.equal('DIFF ask (HumanInTheLoop): context changes differ\n1 steps: 0 same, 1 different, 0 kept\n');
    });
  });
});

describe('replayRun: steps that are not re-executed', () => {
  const workflow = forkedWorkflow({
    kind: 'Workflow',
    metadata: { name: 'mixed', schema_version: 'v1' },
    spec: {
      trigger: { http: { path: '/api/mixed', method: 'POST' } },
      steps: [
        { id: 'think', kind: 'Agent', mode: 'autonomous', model: 'any' },
        { id: 'check', kind: 'HumanInTheLoop', output_key: 'check', routes: { approve: 'END', reject: 'END' } },
      ],
    },
  });
  const entry = (type: string, agent_id: string, engine: string, payload: Record<string, unknown>) =>
    ({ type, data: { agent_id, engine, payload } }) as RunEvent;
  const decision = { approval_id: 'a1', step_id: 'check', decision: 'approve', values: { ok: true }, comment: null, decided_by: 'u1' };
  const journal = (decided: Record<string, unknown> | null, signal = 'approve'): RunEvent[] => [
    entry('run_started', 'run', 'Workflow', { run_id: 'r1', workflow: 'mixed', schema_version: 'v1', input: {}, principal: null, first_step: 'think' }),
    entry('step_started', 'think', 'Agent', {}),
    entry('llm_turn', 'think', 'Agent', { iteration: 1, response: 'done' }),
    entry('step_completed', 'think', 'Agent', { signal: 'default', changes: { set: { thought: 'done' }, unset: [] }, next: 'check' }),
    entry('step_started', 'check', 'HumanInTheLoop', {}),
    ...(decided ? [entry('approval_decided', 'check', 'HumanInTheLoop', decided)] : []),
    entry('step_completed', 'check', 'HumanInTheLoop', {
      signal,
      changes: { set: { check: { ...decision, approval_id: undefined, step_id: undefined } }, unset: [] },
      next: null,
    }),
  ];
  const replay = (entries: RunEvent[]) => replayRun(workflow, JSON.parse(JSON.stringify(entries)) as RunEvent[], {} as StepDeps);

  it('an Agent step is KEPT; a HumanInTheLoop step is judged by its recorded decision', async () => {
    expect(await replay(journal(decision))).to.deep.equal([
      { step: 'think', kind: 'Agent', verdict: 'KEPT', detail: AGENT_KEPT },
      { step: 'check', kind: 'HumanInTheLoop', verdict: 'SAME' },
    ]);
  });

  it('a HumanInTheLoop step whose journaled outcome does not follow from its decision is DIFF', async () => {
    expect((await replay(journal({ ...decision, decision: 'reject' })))[1]).to.deep.equal({
      step: 'check',
      kind: 'HumanInTheLoop',
      verdict: 'DIFF',
      detail: 'signal approve -> reject; context changes differ',
    });
    expect((await replay(journal(null)))[1]).to.deep.include({ verdict: 'DIFF', detail: 'no recorded decision for the step' });
  });
});
