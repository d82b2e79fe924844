// The embedded PostgreSQL: first start in an empty folder, restarts that keep data, reusing an orphan.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { createLogger } from '../../src/kernel/logger.js';
import { freePort } from '../support/db.js';

async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

describe('embedded PostgreSQL', function () {
  // initdb and a cold start take a few seconds.
  this.timeout(60_000);
  let folder: string;
  let dataDir: string;
  let port: number;
  const running: EmbeddedPostgres[] = [];
  const logger = createLogger('silent');

  before(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'svc-embedded-'));
    // Under root the cluster runs as the `postgres` user, which must be able to enter the folder.
    await chmod(folder, 0o755);
    dataDir = path.join(folder, 'pgdata');
    port = await freePort();
  });
  after(async () => {
    for (const server of running.splice(0)) await server.stop().catch(() => undefined);
    await rm(folder, { recursive: true, force: true });
  });

  async function start(): Promise<EmbeddedPostgres> {
    const server = await startEmbeddedPostgres({ dataDir, port, logger });
    running.push(server);
    return server;
  }
  async function stop(server: EmbeddedPostgres): Promise<void> {
    running.splice(running.indexOf(server), 1);
    await server.stop();
  }

  it('initialises an empty folder, and keeps its data across a stop and a start', async () => {
    const first = await start();
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).to.equal(true);
    const credentials = JSON.parse(await readFile(path.join(folder, 'embedded-postgres.json'), 'utf8')) as { user: string; password: string };
    expect(first.url).to.equal(`postgres://${credentials.user}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/postgres`);
    await query(first.url, 'CREATE TABLE kept (id int PRIMARY KEY, note text)');
    await query(first.url, 'INSERT INTO kept VALUES (1, $1)', ['survives a restart']);
    await stop(first);
    expect(existsSync(path.join(dataDir, 'postmaster.pid')), 'stopped cleanly').to.equal(false);

    const second = await start();
    expect(second.url).to.equal(first.url);
    expect(await query(second.url, 'SELECT id, note FROM kept')).to.deep.equal([{ id: 1, note: 'survives a restart' }]);
    // The cluster refuses a wrong password (scram-sha-256), so the stored one is what lets us in.
    const wrong = new URL(second.url);
    wrong.password = 'not-the-password';
    const refused = await query(wrong.toString(), 'SELECT 1').catch((error: { code?: string }) => error.code);
    expect(refused).to.equal('28P01');
    await stop(second);
  });

  it('reuses a cluster left running on the folder instead of failing on its lock file', async () => {
    const orphan = await start();
    const pid = await postmasterPid(dataDir);
    const startedAt = await query<{ started: string }>(orphan.url, 'SELECT pg_postmaster_start_time()::text AS started');

    // Nobody stopped it (as after a killed process): starting again attaches to the same postmaster.
    const reused = await startEmbeddedPostgres({ dataDir, port, logger });
    expect(reused.url).to.equal(orphan.url);
    expect(await postmasterPid(dataDir)).to.equal(pid);
    expect(await query(reused.url, 'SELECT pg_postmaster_start_time()::text AS started')).to.deep.equal(startedAt);
    expect(await query(reused.url, 'SELECT note FROM kept')).to.deep.equal([{ note: 'survives a restart' }]);

    // Stopping through the reused handle stops the orphan postmaster itself.
    await reused.stop();
    expect(isRunning(pid)).to.equal(false);
    expect(existsSync(path.join(dataDir, 'postmaster.pid'))).to.equal(false);
    // The first handle's process is gone now; embedded-postgres would wait forever for its exit event.
    running.splice(running.indexOf(orphan), 1);

    // And the folder starts normally afterwards.
    const again = await start();
    expect(await query(again.url, 'SELECT count(*)::int AS n FROM kept')).to.deep.equal([{ n: 1 }]);
    await stop(again);
  });
});
