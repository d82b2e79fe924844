// An abort sent to instance B reaches the Agent step instance A is running while a write transaction
// is held open elsewhere on the cluster: A hears it on the run's own stream (no snapshot gate), so
// the model call in flight is cancelled at once, not when the transaction ends.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { withDatabase } from '../../src/db/pool.js';
import { createLogger } from '../../src/kernel/logger.js';
import type { Service } from '../../src/main.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { FakeOpenAi } from './support/fakeOpenAi.js';
import { agentProject, SIGNING_KEY } from './support/harness.js';

/** Far above what a delivery needs; far below the minute the model holds its answer. */
const DEADLINE_MS = 10_000;

describe('an abort on another instance while a long transaction is open elsewhere on the cluster', function () {
  this.timeout(120_000);
  const fake = new FakeOpenAi();
  let folder: string;
  let cluster: EmbeddedPostgres;
  let a: Service;
  let b: Service;
  /** On the services' database: to check that the blocker really holds events behind the gate. */
  let observer: pg.Client;
  let blocker: pg.Client | undefined;

  const eventsBehindGate = async () =>
    Number(
      (await observer.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE transaction_id >= pg_snapshot_xmin(pg_current_snapshot())')).rows[0]!.n,
    );

  before(async () => {
    await fake.start();
    folder = await mkdtemp(path.join(tmpdir(), 'svc-abort-long-tx-'));
    // Under root the cluster runs as the `postgres` user, which must be able to enter the folder.
    await chmod(folder, 0o755);
    cluster = await startEmbeddedPostgres({ dataDir: path.join(folder, 'pgdata'), port: await freePort(), logger: createLogger('silent'), persistent: false });
    const setup = new pg.Client({ connectionString: cluster.url });
    await setup.connect();
    await setup.query('CREATE DATABASE svc');
    await setup.query('CREATE DATABASE elsewhere');
    await setup.end();
    const databaseUrl = withDatabase(cluster.url, 'svc');
    const options = { databaseUrl, projectDir: agentProject('http://127.0.0.1:9/mcp'), env: { SVC_SIGNING_KEY: SIGNING_KEY, SVC_LLM_BASE_URL: fake.baseUrl } };
    a = await startTestService(options);
    b = await startTestService(options);
    observer = new pg.Client({ connectionString: databaseUrl });
    await observer.connect();
  });
  after(async () => {
    await blocker?.end().catch(() => undefined);
    await a?.close();
    await b?.close();
    await observer?.end();
    await cluster?.stop();
    await rm(folder, { recursive: true, force: true });
    await fake.stop();
  });

  it("cancels A's model call while the blocker is still open, and the run ends aborted", async () => {
    const admin = (await bootstrapAdmin(a.url)).token;
    const key = 'held-answer-61';
    fake.script(key, [{ content: 'too late', delayMs: 60_000 }]);
    const started = await call(a.url, 'POST', '/api/agents/ask?wait=false', { token: admin, json: { question: key } });
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    const runId = started.body.id as string;
    const [request] = await fake.waitForRequests(key, 1);

    blocker = new pg.Client({ connectionString: withDatabase(cluster.url, 'elsewhere') });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('CREATE TABLE held (n int)');
    await blocker.query('INSERT INTO held VALUES (1)');

    const aborted = await call(b.url, 'POST', `/api/runs/${runId}/abort`, { token: admin, json: { reason: 'stop it' } });
    expect(aborted.status, JSON.stringify(aborted.body)).to.equal(200);
    expect(await eventsBehindGate(), 'the abort is behind the gate').to.be.greaterThan(0);

    const cancelled = await eventually(async () => request!.hungUp, DEADLINE_MS);
    expect(cancelled.ok, "A's model call was not cancelled while the blocker was open").to.equal(true);
    const released = await eventually(async () => a.executor.activeRunCount() === 0, DEADLINE_MS);
    expect(released.ok, 'A still drives the run').to.equal(true);
    expect(await eventsBehindGate(), 'the blocker was open throughout').to.be.greaterThan(0);
    await blocker.query('COMMIT');

    const journal: { type: string }[] = (await call(a.url, 'GET', `/api/runs/${runId}/export`, { token: admin })).body.events;
    expect(journal.at(-1)!.type).to.equal('run_aborted');
    expect(
      journal.filter((e) => ['llm_turn', 'step_completed', 'step_failed'].includes(e.type)),
      'nothing of the held answer',
    ).to.have.length(0);
  });
});
