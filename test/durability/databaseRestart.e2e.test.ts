// A `svc serve` process rides out its database going away: PostgreSQL stopped for seconds (idle, and
// under load), and its backends terminated again and again under load. The process stays up, /health
// goes 503 and back to ok by itself, every answer is 201, 202 or 503 (with Retry-After, no internal
// text), every run that got a run id is recorded and completes, and no 503 left a run behind.
// The cluster is a private one (stopping the shared server would break other tests).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { ensureDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { createPool, withDatabase } from '../../src/db/pool.js';
import { createLogger } from '../../src/kernel/logger.js';
import { freePort } from '../support/db.js';
import { bootstrapAdmin, call, eventually } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { FIXTURES, journalOf, journalProblems, waitForStatus } from './helpers.js';

const OUTAGE_PROJECT = path.join(FIXTURES, 'outage');
/** Text of the failures underneath that no answer may carry. */
const INTERNAL_TEXT = [
  'ECONNREFUSED',
  'ECONNRESET',
  'terminating connection',
  'Connection terminated',
  'the database system is',
  'not queryable',
  'INSERT INTO',
  'SELECT ',
  'engine failure',
];

interface Answer {
  path: string;
  status: number;
  runId: string | null;
  retryAfter: string | null;
  body: any;
}

/** Clients that start runs back to back (waiting and not), keeping every answer, until stopped. */
class RunLoad {
  readonly answers: Answer[] = [];
  /** Requests that got no HTTP answer at all (the process went away). */
  readonly unanswered: string[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly url: string,
    private readonly token: string,
    clients: number,
  ) {
    this.loops = Array.from({ length: clients }, (_, client) => this.loop(client));
  }

  private async loop(client: number): Promise<void> {
    for (let n = 0; !this.stopped; n++) {
      const path = n % 2 === 0 ? '/api/outage' : '/api/outage?wait=false';
      try {
        const result = await call(this.url, 'POST', path, { token: this.token, json: { sleep_ms: 40, tag: `c${client}-${n}` } });
        this.answers.push({
          path,
          status: result.status,
          runId: result.headers.get('x-svc-run-id'),
          retryAfter: result.headers.get('retry-after'),
          body: result.body,
        });
        // Short of Retry-After on purpose: the load goes on through the outage.
        if (result.status === 503) await sleep(100);
      } catch (error) {
        this.unanswered.push(`${path}: ${String(error)}`);
        await sleep(100);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }
}

async function healthStatus(url: string): Promise<number> {
  return fetch(`${url}/health`).then(
    (r) => r.status,
    () => 0,
  );
}

describe('durability: the database restarts or goes away under a running service', function () {
  this.timeout(180_000);
  let folder: string;
  let dataDir: string;
  let port: number;
  let cluster: EmbeddedPostgres | undefined;
  let databases = 0;
  const logger = createLogger('silent');

  const startCluster = async (): Promise<EmbeddedPostgres> => (cluster = await startEmbeddedPostgres({ dataDir, port, logger }));
  const stopCluster = async (): Promise<void> => {
    const running = cluster;
    cluster = undefined;
    await running?.stop();
  };

  before(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'svc-outage-'));
    // Under root the cluster runs as the `postgres` user, which must be able to enter the folder.
    await chmod(folder, 0o755);
    dataDir = path.join(folder, 'pgdata');
    port = await freePort();
    await startCluster();
  });
  after(async () => {
    await killAllServices();
    await stopCluster().catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
  });
  afterEach(async () => {
    await killAllServices();
    if (!cluster) await startCluster();
  });

  /** A fresh database on the private cluster and a service on it. */
  async function startService(): Promise<{ service: ServiceProcess; databaseUrl: string; token: string }> {
    const databaseUrl = withDatabase(cluster!.url, `svc_outage_${++databases}`);
    await ensureDatabase(cluster!.url, `svc_outage_${databases}`);
    const service = await ServiceProcess.start(databaseUrl, OUTAGE_PROJECT);
    const { token } = await bootstrapAdmin(service.url);
    return { service, databaseUrl, token };
  }

  async function expectHealth(service: ServiceProcess, status: number, timeoutMs: number): Promise<void> {
    const reached = await eventually(async () => (await healthStatus(service.url)) === status, timeoutMs, 100);
    expect(reached.ok, `/health did not answer ${status} within ${timeoutMs} ms:\n${service.output}`).to.equal(true);
  }

  /** What every answer under load must be, and what the journal must hold afterwards. */
  async function checkLoad(load: RunLoad, databaseUrl: string, service: ServiceProcess): Promise<void> {
    expect(load.unanswered, 'requests without an answer').to.deep.equal([]);
    const byStatus = new Map<number, number>();
    for (const answer of load.answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1);
    expect(
      [...byStatus.keys()].filter((s) => ![201, 202, 503].includes(s)),
      `answers by status: ${JSON.stringify([...byStatus])}`,
    ).to.deep.equal([]);
    for (const answer of load.answers) {
      const text = JSON.stringify(answer.body);
      for (const secret of INTERNAL_TEXT) expect(text, `an answer carries "${secret}"`).to.not.include(secret);
      if (answer.status !== 503) {
        expect(answer.runId, `${answer.status} without a run id`).to.be.a('string');
        continue;
      }
      expect(answer.body.code).to.equal('UNAVAILABLE');
      expect(Number(answer.retryAfter), 'Retry-After').to.be.greaterThan(0);
      // A run id on a 503 only when a COMMIT was cut off in flight: the answer says it may exist.
      if (answer.runId) expect(answer.body.detail).to.include(`/api/runs/${answer.runId}`);
    }
    const acknowledged = load.answers.filter((a) => a.status !== 503).map((a) => a.runId!);
    const maybe = new Set(load.answers.filter((a) => a.status === 503 && a.runId).map((a) => a.runId!));
    const db = createPool({ connectionString: databaseUrl, max: 2 });
    try {
      await waitForStatus(db, acknowledged, ['completed'], 60_000, () => service.output);
      const { rows } = await db.query<{ id: string; status: string }>(`SELECT id::text, status FROM svc_runs WHERE workflow = 'outage'`);
      const answered = new Set(acknowledged);
      const unanswered = rows.filter((r) => !answered.has(r.id) && !maybe.has(r.id));
      expect(unanswered, 'runs recorded for a 503 that said nothing was recorded').to.deep.equal([]);
      for (const runId of acknowledged) {
        const journal = await journalOf(db, runId);
        expect(journalProblems(journal), `run ${runId}`).to.deep.equal([]);
        expect(
          journal.map((e) => e.type),
          `run ${runId}`,
        ).to.not.include('run_failed');
      }
      await waitForStatus(
        db,
        rows.map((r) => r.id),
        ['completed'],
        60_000,
        () => service.output,
      );
    } finally {
      await db.end();
    }
    console.log(`      answers: ${JSON.stringify(Object.fromEntries(byStatus))}`);
  }

  it('idle, across a stop of several seconds: the process stays up, /health goes 503 then ok, and an approval that fell due meanwhile expires', async () => {
    const { service, token } = await startService();
    const held = await call(service.url, 'POST', '/api/hold', { token, json: { tag: 'idle' } });
    expect(held.status, JSON.stringify(held.body)).to.equal(202);
    // A follower of the run's events, open across the outage.
    const events = await fetch(`${service.url}/api/runs/${held.body.id}/events`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    expect(events.status).to.equal(200);
    let streamed = '';
    const following = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of events.body!) streamed += decoder.decode(chunk as Uint8Array, { stream: true });
    })();

    await stopCluster();
    // The expiry sweep and the claim loop tick every 200 ms, the LISTEN connection retries: all fail.
    await expectHealth(service, 503, 10_000);
    await sleep(5000);
    expect(service.isRunning, `the process died while the database was stopped:\n${service.output}`).to.equal(true);
    const refused = await call(service.url, 'GET', `/api/runs/${held.body.id}`, { token });
    expect(refused.status).to.equal(503);
    expect(refused.body.code).to.equal('UNAVAILABLE');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);

    await startCluster();
    await expectHealth(service, 200, 30_000);
    const expired = await eventually(
      async () => (await call(service.url, 'GET', `/api/runs/${held.body.id}`, { token })).body.status === 'completed',
      30_000,
      100,
    );
    expect(expired.ok, `the approval did not expire after the database came back:\n${service.output}`).to.equal(true);
    const run = await call(service.url, 'GET', `/api/runs/${held.body.id}`, { token });
    expect(run.body.output).to.deep.equal({ tag: 'idle', outcome: 'expired' });
    // The stream stayed open and delivered what was written after the outage, then closed at the end.
    await following;
    expect(streamed).to.include('event: approval_decided');
    expect(streamed).to.include('event: run_completed');
    expect(service.isRunning).to.equal(true);
  });

  it('a restart under load: answers are 201, 202 or 503 (Retry-After), acknowledged runs complete, a 503 leaves nothing behind', async () => {
    const { service, databaseUrl, token } = await startService();
    const load = new RunLoad(service.url, token, 6);
    await eventually(async () => load.answers.filter((a) => a.status !== 503).length >= 20, 20_000, 20);

    await stopCluster();
    await expectHealth(service, 503, 10_000);
    await sleep(3000);
    expect(service.isRunning, `the process died while the database was stopped:\n${service.output}`).to.equal(true);
    const duringOutage = load.answers.length;
    await startCluster();
    await expectHealth(service, 200, 30_000);
    const back = await eventually(async () => load.answers.slice(duringOutage).filter((a) => a.status === 201).length >= 10, 30_000, 50);
    expect(back.ok, 'runs complete again after the restart').to.equal(true);
    await load.stop();

    expect(service.isRunning, service.output).to.equal(true);
    expect(load.answers.filter((a) => a.status === 503).length, 'the outage was seen').to.be.greaterThan(0);
    await checkLoad(load, databaseUrl, service);
  });

  it('backends terminated again and again under load: the process stays up and every answer says what happened', async () => {
    const { service, databaseUrl, token } = await startService();
    const database = new URL(databaseUrl).pathname.slice(1);
    const admin = new pg.Client({ connectionString: cluster!.url });
    admin.on('error', () => undefined);
    await admin.connect();
    try {
      const load = new RunLoad(service.url, token, 6);
      await eventually(async () => load.answers.length >= 20, 20_000, 20);
      let terminated = 0;
      for (let round = 0; round < 15; round++) {
        const { rows } = await admin.query<{ gone: boolean }>(
          'SELECT pg_terminate_backend(pid) AS gone FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [database],
        );
        terminated += rows.filter((r) => r.gone).length;
        await sleep(200);
      }
      const afterKills = load.answers.length;
      const back = await eventually(async () => load.answers.slice(afterKills).filter((a) => a.status === 201).length >= 10, 30_000, 50);
      expect(back.ok, 'runs complete again after the terminations').to.equal(true);
      await load.stop();

      expect(terminated, 'backends terminated').to.be.greaterThan(15);
      expect(service.isRunning, service.output).to.equal(true);
      await expectHealth(service, 200, 10_000);
      await checkLoad(load, databaseUrl, service);
    } finally {
      await admin.end();
    }
  });
});
