// Test databases: one migrated template per run, cloned per test file (CREATE DATABASE ... TEMPLATE).
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, withDatabase } from '../../src/db/pool.js';
import { createLogger } from '../../src/kernel/logger.js';

interface TestCluster {
  serverUrl: string;
  template: string;
  embedded?: EmbeddedPostgres;
  tempDir?: string;
}

let cluster: TestCluster | undefined;
let counter = 0;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts the embedded server unless TEST_DATABASE_URL / DATABASE_URL names one; builds the template. */
export async function setUpTestCluster(): Promise<void> {
  const external = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let serverUrl: string;
  const state: Partial<TestCluster> = {};
  if (external) {
    serverUrl = external;
  } else {
    state.tempDir = await mkdtemp(path.join(tmpdir(), 'svc-test-'));
    // Under root the cluster runs as the `postgres` user, which must be able to enter the folder.
    await chmod(state.tempDir, 0o755);
    state.embedded = await startEmbeddedPostgres({
      dataDir: path.join(state.tempDir, 'pgdata'),
      port: await freePort(),
      logger: createLogger('silent'),
      persistent: false,
      durable: false,
    });
    serverUrl = state.embedded.url;
  }
  const template = `svc_template_${process.pid}`;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template}`);
  await adminQuery(serverUrl, `CREATE DATABASE ${template}`);
  const pool = createPool({ connectionString: withDatabase(serverUrl, template), max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  cluster = { serverUrl, template, ...state };
}

export async function tearDownTestCluster(): Promise<void> {
  if (!cluster) return;
  const { serverUrl, template, embedded, tempDir } = cluster;
  cluster = undefined;
  if (embedded) {
    await embedded.stop();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
    return;
  }
  const { rows } = await adminQuery<{ datname: string }>(serverUrl, `SELECT datname FROM pg_database WHERE datname LIKE $1`, [`svc_t${process.pid}_%`]);
  for (const { datname } of rows) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template}`);
}

/** A fresh, migrated database of its own; answers its URL. */
export async function createTestDatabase(): Promise<string> {
  if (!cluster) throw new Error('The test cluster is not set up (test/support/fixtures.ts)');
  const name = `svc_t${process.pid}_${++counter}`;
  await adminQuery(cluster.serverUrl, `CREATE DATABASE ${name} TEMPLATE ${cluster.template}`);
  return withDatabase(cluster.serverUrl, name);
}

/** The server's URL (any database), for tests that create databases of their own. */
export function testServerUrl(): string {
  if (!cluster) throw new Error('The test cluster is not set up');
  return cluster.serverUrl;
}

async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query<R>(sql, params);
  } finally {
    await client.end();
  }
}
