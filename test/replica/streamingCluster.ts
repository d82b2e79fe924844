// A PostgreSQL primary and a streaming replica of it on loopback, made with the machine's server
// binaries (initdb, pg_basebackup -R, pg_ctl) in a temporary folder, torn down after.
import { existsSync } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../support/db.js';
import { eventually } from '../support/http.js';
import { serverBinaries, serverFolder, serverTool } from './serverTools.js';

export class StreamingCluster {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly primaryPort: number,
    readonly replicaPort: number,
  ) {}

  /** initdb a primary (wal_level=replica), start it, pg_basebackup -R a replica of it, start that. */
  static async start(): Promise<StreamingCluster> {
    const bin = serverBinaries();
    const dir = await serverFolder('svc-replica-');
    const cluster = new StreamingCluster(bin, dir, await freePort(), await freePort());
    try {
      await cluster.tool('initdb', ['-D', cluster.primaryDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      const settings = [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        'wal_level = replica',
        'max_wal_senders = 4',
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        // A long read on the replica waits for replay rather than being cancelled.
        'max_standby_streaming_delay = -1',
        'hot_standby_feedback = on',
      ];
      await appendFile(path.join(cluster.primaryDir, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
      await cluster.pgCtl(cluster.primaryDir, cluster.primaryPort, 'primary.log');
      await cluster.tool('pg_basebackup', [
        '-h',
        '127.0.0.1',
        '-p',
        String(cluster.primaryPort),
        '-U',
        'postgres',
        '-D',
        cluster.replicaDir,
        '-R',
        '-X',
        'stream',
        '--no-sync',
      ]);
      await cluster.pgCtl(cluster.replicaDir, cluster.replicaPort, 'replica.log');
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  get primaryUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.primaryPort}/postgres`;
  }

  get replicaUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.replicaPort}/postgres`;
  }

  /** One query on the server at `url` (a connection of its own). */
  async query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<R>(text, values)).rows;
    } finally {
      await client.end();
    }
  }

  /** Creates a database on the primary and waits until the replica has replayed it. */
  async createDatabase(name: string): Promise<{ primary: string; replica: string }> {
    await this.query(this.primaryUrl, `CREATE DATABASE "${name}"`);
    const seen = await eventually(async () => (await this.query(this.replicaUrl, 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1, 30_000);
    if (!seen.ok) throw new Error(`the replica never showed database ${name}`);
    const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/${name}`;
    return { primary: url(this.primaryPort), replica: url(this.replicaPort) };
  }

  /** Stops applying WAL on the replica (it still receives it): from now on it lags. */
  async pauseReplay(): Promise<void> {
    await this.query(this.replicaUrl, 'SELECT pg_wal_replay_pause()');
    const paused = await eventually(
      async () => (await this.query<{ state: string }>(this.replicaUrl, 'SELECT pg_get_wal_replay_pause_state() AS state'))[0]?.state === 'paused',
      10_000,
    );
    if (!paused.ok) throw new Error('replay did not pause');
  }

  async resumeReplay(): Promise<void> {
    await this.query(this.replicaUrl, 'SELECT pg_wal_replay_resume()');
  }

  /** Waits until the replica has replayed everything the primary has written so far. */
  async waitForReplay(): Promise<void> {
    const [{ lsn }] = (await this.query<{ lsn: string }>(this.primaryUrl, 'SELECT pg_current_wal_insert_lsn()::text AS lsn')) as [{ lsn: string }];
    const caughtUp = await eventually(
      async () => (await this.query<{ ok: boolean }>(this.replicaUrl, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn]))[0]?.ok === true,
      30_000,
    );
    if (!caughtUp.ok) throw new Error(`the replica did not replay ${lsn}`);
  }

  /** Stops the replica (fast shutdown): its connections end, new ones are refused. */
  async stopReplica(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.replicaDir, '-m', 'fast', '-w', 'stop']);
  }

  /** Stops both servers (immediate) and removes the folder. */
  async stop(): Promise<void> {
    for (const dataDir of [this.replicaDir, this.primaryDir]) {
      if (existsSync(path.join(dataDir, 'postmaster.pid'))) await this.tool('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  private get primaryDir(): string {
    return path.join(this.dir, 'primary');
  }

  private get replicaDir(): string {
    return path.join(this.dir, 'replica');
  }

  private async pgCtl(dataDir: string, port: number, logName: string): Promise<void> {
    const options = `-p ${port} -k ${this.dir}`;
    await this.tool('pg_ctl', ['-D', dataDir, '-o', options, '-l', path.join(this.dir, logName), '-w', '-t', '60', 'start']);
  }

  private async tool(name: string, args: string[]): Promise<void> {
    await serverTool(this.bin, this.dir, name, args);
  }
}
