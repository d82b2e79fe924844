// The DBOS peer of the workflows benchmark (../shared/peers/dbos): installed on demand, run as a child process.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { withDatabase } from '../src/db/pool.js';
import { BENCH_DIR, SERVER_URL } from './support.js';
import { adminQuery, freePort, queryOn, requestJson, startPeerProcess } from './httpSupport.js';
import { BODY, measure, type Target } from './workflowsLoad.js';

const PEER_DIR = process.env.BENCH_DBOS_DIR ?? path.join(BENCH_DIR, '..', '..', 'shared', 'peers', 'dbos');
export const PEER_DATABASE = 'dbos_bench';

export interface PeerOutcome {
  target?: Target;
  error?: string;
  version?: string;
}

/** Installs the peer's packages (as peers/run.sh does) when they are missing; answers why it could not, if so. */
function ensurePeerInstalled(): string | undefined {
  if (!existsSync(path.join(PEER_DIR, 'server.mjs'))) return `no DBOS peer at ${PEER_DIR}`;
  if (existsSync(path.join(PEER_DIR, 'node_modules', '@dbos-inc', 'dbos-sdk'))) return undefined;
  console.error(`  installing the DBOS peer's packages (npm ci in ${PEER_DIR})`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: PEER_DIR, stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 });
  if (result.status !== 0)
    return `npm ci in ${PEER_DIR} failed (${result.status ?? result.signal}): ${String(result.stderr).trim().split('\n').slice(-3).join(' ')}`;
  return undefined;
}

export async function measureDbos(): Promise<PeerOutcome> {
  const installError = ensurePeerInstalled();
  if (installError) return { error: installError };
  const version = (JSON.parse(readFileSync(path.join(PEER_DIR, 'node_modules', '@dbos-inc', 'dbos-sdk', 'package.json'), 'utf8')) as { version: string })
    .version;
  const databaseUrl = withDatabase(SERVER_URL, PEER_DATABASE);
  // DBOS creates and migrates its system database at launch.
  await adminQuery(`DROP DATABASE IF EXISTS ${PEER_DATABASE} WITH (FORCE)`);
  await adminQuery('CHECKPOINT');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let peer;
  try {
    peer = await startPeerProcess('dbos', PEER_DIR, 'server.mjs', { PORT: String(port), DBOS_DB_URL: databaseUrl }, url);
  } catch (error) {
    return { error: `the DBOS peer did not start: ${(error as Error).message.split('\n')[0]}`, version };
  }
  try {
    const sample = await requestJson(`${url}/api/hello`, { json: JSON.parse(BODY) });
    if (sample.status !== 201 || sample.body.name !== 'WORLD' || sample.body.sum !== 15) {
      return { error: `the DBOS peer answered ${sample.status}: ${JSON.stringify(sample.body).slice(0, 200)}`, version };
    }
    const count = async (where: string) =>
      Number((await queryOn<{ n: string }>(databaseUrl, `SELECT count(*) AS n FROM dbos.workflow_status WHERE ${where}`))[0]!.n);
    console.error(`  DBOS ${version}:`);
    const target = await measure({
      label: 'DBOS',
      serverPid: peer.pid,
      syncUrl: `${url}/api/hello`,
      asyncUrl: `${url}/api/hello-async`,
      pending: () => count("status NOT IN ('SUCCESS', 'ERROR', 'CANCELLED')"),
      completed: () => count("status = 'SUCCESS'"),
    });
    return { target, version };
  } finally {
    await peer.stop();
    await adminQuery(`DROP DATABASE IF EXISTS ${PEER_DATABASE} WITH (FORCE)`).catch(() => undefined);
  }
}
