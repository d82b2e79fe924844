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

/**
 * What the test files need of the cluster, for parallel mode too: mocha runs the global setup in its
 * own process and the files in worker processes, which inherit the environment it leaves.
 */
const SERVER_URL_VAR = 'SVC_TEST_SERVER_URL';
const TEMPLATE_VAR = 'SVC_TEST_TEMPLATE';
const PREFIX_VAR = 'SVC_TEST_DATABASE_PREFIX';

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
  const prefix = `svc_t${process.pid}_`;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template}`);
  await adminQuery(serverUrl, `CREATE DATABASE ${template}`);
  const pool = createPool({ connectionString: withDatabase(serverUrl, template), max: 1 });
  try {
    await migrate(pool);
  } finally {
    await pool.end();
  }
  cluster = { serverUrl, template, ...state };
  Object.assign(process.env, { [SERVER_URL_VAR]: serverUrl, [TEMPLATE_VAR]: template, [PREFIX_VAR]: prefix });
}

/** The cluster as the global setup left it: in this process, or through the environment in a worker. */
function currentCluster(): { serverUrl: string; template: string; prefix: string } {
  const serverUrl = process.env[SERVER_URL_VAR];
  const template = process.env[TEMPLATE_VAR];
  const prefix = process.env[PREFIX_VAR];
  if (!serverUrl || !template || !prefix) throw new Error('The test cluster is not set up (test/support/fixtures.ts)');
  return { serverUrl, template, prefix };
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
  const { rows } = await adminQuery<{ datname: string }>(serverUrl, `SELECT datname FROM pg_database WHERE datname LIKE $1`, [`${currentCluster().prefix}%`]);
  for (const { datname } of rows) await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template}`);
}

/** A fresh, migrated database of its own; answers its URL. */
export async function createTestDatabase(): Promise<string> {
  const { serverUrl, template, prefix } = currentCluster();
  // The worker's pid keeps the names of files running side by side apart.
  const name = `${prefix}${process.pid}_${++counter}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name} TEMPLATE ${template}`);
  return withDatabase(serverUrl, name);
}

/** The server's URL (any database), for tests that create databases of their own. */
export function testServerUrl(): string {
  return currentCluster().serverUrl;
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
