// Crash-resume of an autonomous agent: SIGKILL the process while the model's second answer is slow
// (after the first turn and its tool call were journaled); another process takes the run over and
// finishes it without asking the model the first prompt again or running the tool twice. And SIGKILL
// while a tool runs: the tool runs again (at least once), and the conversation goes on unchanged.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { privateKeys } from '../support/runs.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { agentProject } from './support/harness.js';
import { McpHttpServer } from './support/mcpHttpServer.js';

interface Row {
  position: number;
  type: string;
  step: string;
  payload: Record<string, any>;
}

async function journalOf(db: pg.Pool, runId: string): Promise<Row[]> {
  const { rows } = await db.query<{ stream_position: string; type: string; data: { agent_id: string; payload: Record<string, any> } }>(
    'SELECT stream_position, type, data FROM events WHERE stream_id = $1 ORDER BY stream_position',
    [`run-${runId}`],
  );
  return rows.map((r) => ({ position: Number(r.stream_position), type: r.type, step: r.data.agent_id, payload: r.data.payload }));
}

/** Where a process of these tests runs: its database, its project, and the fake model's URL. */
interface Setup {
  databaseUrl: string;
  projectDir: string;
  env: Record<string, string>;
}

const startOn = (setup: Setup) => ServiceProcess.start(setup.databaseUrl, setup.projectDir, setup.env);

/** Starts another service on the same database and waits until it has ended the run. */
async function finishOnSecondProcess(setup: Setup, db: pg.Pool, runId: string): Promise<ServiceProcess> {
  const second = await startOn(setup);
  const done = await eventually(
    async () => {
      const { rows } = await db.query<{ status: string }>('SELECT status FROM svc_runs WHERE id = $1', [runId]);
      return rows[0]?.status === 'completed' || rows[0]?.status === 'failed';
    },
    20_000,
    100,
  );
  expect(done.ok, `the run did not finish on the second process:\n${second.output}`).to.equal(true);
  return second;
}

describe('agent crash-resume across processes', function () {
  this.timeout(90_000);
  const fake = new FakeOpenAi();
  const mcp = new McpHttpServer();
  let db: pg.Pool;
  const pools: pg.Pool[] = [];

  before(async () => {
    await fake.start();
    await mcp.start();
  });
  after(async () => {
    await killAllServices();
    await Promise.all(pools.map((pool) => pool.end()));
    await fake.stop();
    await mcp.stop();
  });

  it('SIGKILL during the second model call: a new process completes the run; the first turn and the tool ran once', async () => {
    const databaseUrl = await createTestDatabase();
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    pools.push(db);
    const setup = { databaseUrl, projectDir: agentProject(mcp.url), env: { SVC_LLM_BASE_URL: fake.baseUrl } };
    const first = await startOn(setup);
    const { token } = await bootstrapAdmin(first.url);

    const key = 'crash-during-turn-two';
    fake.script(key, [
      { toolCalls: [{ name: 'lookup', args: { query: 'before the crash' }, id: 'call_once' }], usage: { prompt_tokens: 40, completion_tokens: 2 } },
      // Taken by the process that dies: it never gets this answer.
      { content: 'never delivered', delayMs: 30_000 },
      { content: 'Recovered after the crash.', usage: { prompt_tokens: 60, completion_tokens: 4 } },
    ]);
    const started = await call(first.url, 'POST', '/api/workflows/helper/runs?wait=false', { token, json: { question: key } });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const runId = started.body.id as string;

    await fake.waitForRequests(key, 2, 20_000);
    const before = await journalOf(db, runId);
    expect(
      before.filter((e) => e.type === 'llm_turn').map((e) => e.payload.iteration),
      'the first turn is journaled before the crash',
    ).to.deep.equal([1]);
    expect(before.filter((e) => e.type === 'tool_result').map((e) => e.payload.call_id)).to.deep.equal(['call_once']);
    await first.kill();

    const second = await finishOnSecondProcess(setup, db, runId);

    const run = await call(second.url, 'GET', `/api/runs/${runId}`, { token });
    expect(run.status).to.equal(200);
    expect(run.body.status, JSON.stringify(run.body)).to.equal('completed');
    expect(run.body.output.answer).to.equal('Recovered after the crash.');
    expect(run.body.output.looked_up).to.deep.equal({ query: 'before the crash', hits: 3 });
    expect(privateKeys(run.body)).to.deep.equal([]);

    const requests = fake.requestsFor(key);
    expect(requests, 'turn 1, the lost turn 2, and turn 2 again on the new process').to.have.length(3);
    expect(
      requests.filter((r) => r.messages.length === 2),
      'the first prompt was sent only once',
    ).to.have.length(1);
    // The same conversation (JSON keys may come back from jsonb in another order).
    const parsed = (r: (typeof requests)[number]) => r.messages.map((m) => ({ ...m, content: m.role === 'tool' ? JSON.parse(String(m.content)) : m.content }));
    expect(parsed(requests[2]!), 'the new process continues the journaled conversation').to.deep.equal(parsed(requests[1]!));

    const journal = await journalOf(db, runId);
    expect(journal.map((e) => e.position)).to.deep.equal(journal.map((_, i) => i + 1));
    expect(
      journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.iteration),
      'no journaled turn is repeated',
    ).to.deep.equal([1, 2]);
    expect(journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.tokens_used)).to.deep.equal([42, 106]);
    expect(
      journal.filter((e) => e.type === 'tool_call').map((e) => e.payload.call_id),
      'the tool was not run again',
    ).to.deep.equal(['call_once']);
    expect(journal.filter((e) => e.type === 'tool_result')).to.have.length(1);
    expect(
      journal.filter((e) => e.type === 'step_started' && e.step === 'agent'),
      'the open step is resumed, not restarted',
    ).to.have.length(1);
    expect(journal.filter((e) => ['run_completed', 'run_failed', 'run_aborted'].includes(e.type)).map((e) => e.type)).to.deep.equal(['run_completed']);
    expect(journal.at(-1)!.type).to.equal('run_completed');
  });

  it('SIGKILL while a tool runs (tool_call journaled, no tool_result): the new process runs it again with the same idempotency key; the next call of the tool gets its own', async () => {
    const databaseUrl = await createTestDatabase();
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    pools.push(db);
    const projectDir = agentProject(mcp.url);
    const starts = path.join(projectDir, 'slow-lookup-starts.log');
    const startsSoFar = () =>
      existsSync(starts)
        ? readFileSync(starts, 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as { key: string; query: string })
        : [];
    const setup = { databaseUrl, projectDir, env: { SVC_LLM_BASE_URL: fake.baseUrl } };
    const first = await startOn(setup);
    const { token } = await bootstrapAdmin(first.url);

    const key = 'crash-during-tool';
    fake.script(key, [
      { toolCalls: [{ name: 'slow_lookup', args: { query: 'mid-crash' }, id: 'call_slow' }], usage: { prompt_tokens: 30, completion_tokens: 3 } },
      { toolCalls: [{ name: 'slow_lookup', args: { query: 'again', wait_ms: 10 }, id: 'call_again' }], usage: { prompt_tokens: 40, completion_tokens: 3 } },
      { content: 'Looked it up after all.', usage: { prompt_tokens: 50, completion_tokens: 5 } },
    ]);
    const started = await call(first.url, 'POST', '/api/workflows/slow_helper/runs?wait=false', { token, json: { question: key } });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const runId = started.body.id as string;

    // The tool started (it takes 2 s): its tool_call is journaled, its tool_result is not.
    const toolStarted = await eventually(async () => startsSoFar().length === 1, 20_000, 25);
    expect(toolStarted.ok, first.output).to.equal(true);
    const before = await journalOf(db, runId);
    expect(before.filter((e) => e.type === 'tool_call').map((e) => e.payload.call_id)).to.deep.equal(['call_slow']);
    expect(before.filter((e) => e.type === 'tool_result')).to.have.length(0);
    await first.kill();

    const second = await finishOnSecondProcess(setup, db, runId);
    const run = await call(second.url, 'GET', `/api/runs/${runId}`, { token });
    expect(run.body.status, JSON.stringify(run.body)).to.equal('completed');
    expect(run.body.output).to.deep.equal({ answer: 'Looked it up after all.', slow_looked_up: { query: 'again' } });

    expect(startsSoFar(), 'the interrupted tool ran again, with the same idempotency key').to.deep.equal([
      { key: `${runId}:slow_lookup`, query: 'mid-crash' },
      { key: `${runId}:slow_lookup`, query: 'mid-crash' },
      { key: `${runId}:slow_lookup:1`, query: 'again' },
    ]);
    const journal = await journalOf(db, runId);
    expect(journal.map((e) => e.position)).to.deep.equal(journal.map((_, i) => i + 1));
    expect(
      journal.filter((e) => e.type === 'tool_call').map((e) => [e.payload.iteration, e.payload.call_id]),
      'each call is journaled once',
    ).to.deep.equal([
      [1, 'call_slow'],
      [2, 'call_again'],
    ]);
    expect(journal.filter((e) => e.type === 'tool_result').map((e) => [e.payload.iteration, e.payload.call_id])).to.deep.equal([
      [1, 'call_slow'],
      [2, 'call_again'],
    ]);
    expect(journal.filter((e) => e.type === 'llm_turn').map((e) => e.payload.iteration)).to.deep.equal([1, 2, 3]);

    const requests = fake.requestsFor(key);
    expect(requests, 'the first turn is not asked again').to.have.length(3);
    const resumed = requests[1]!.messages;
    expect(
      resumed.map((m) => m.role),
      'one assistant turn, answered by one tool message',
    ).to.deep.equal(['system', 'user', 'assistant', 'tool']);
    expect((resumed[2]!.tool_calls as { id: string }[]).map((c) => c.id)).to.deep.equal(['call_slow']);
    expect(resumed[3]!.tool_call_id).to.equal('call_slow');
    expect(JSON.parse(String(resumed[3]!.content))).to.deep.equal({ signal: 'default', result: { slow_looked_up: { query: 'mid-crash' } } });
  });
});
