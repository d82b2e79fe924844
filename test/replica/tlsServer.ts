// A PostgreSQL server on loopback that accepts TLS connections only: initdb in a temporary folder, a
// certificate for 127.0.0.1 signed by a CA made with openssl for the test, `ssl = on`, and a pg_hba.conf
// that trusts `hostssl` and rejects `hostnossl`. A second CA that signed nothing is there to be wrong.
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../support/db.js';
import { isRoot, postgresIds, run, serverBinaries, serverFolder, serverTool } from './serverTools.js';

/** Only encrypted connections are let in, from loopback (IPv4 and IPv6: `localhost` may be either). */
const PG_HBA = `local all all trust
hostssl all all 127.0.0.1/32 trust
hostssl all all ::1/128 trust
hostnossl all all 127.0.0.1/32 reject
hostnossl all all ::1/128 reject
`;

export class TlsServer {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** Makes the certificates, initdb, configures TLS and starts the server. */
  static async start(): Promise<TlsServer> {
    const bin = serverBinaries();
    const server = new TlsServer(bin, await serverFolder('svc-pgtls-'), await freePort());
    try {
      await server.makeCertificates();
      await serverTool(bin, server.dir, 'initdb', ['-D', server.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
      const settings = [
        "listen_addresses = '127.0.0.1,::1'",
        `unix_socket_directories = '${server.dir}'`,
        'fsync = off',
        'ssl = on',
        `ssl_cert_file = '${server.file('server.crt')}'`,
        `ssl_key_file = '${server.file('server.key')}'`,
      ];
      await appendFile(path.join(server.dataDir, 'postgresql.conf'), `\n${settings.join('\n')}\n`);
      await writeFile(path.join(server.dataDir, 'pg_hba.conf'), PG_HBA);
      const options = `-p ${server.port} -k ${server.dir}`;
      await serverTool(bin, server.dir, 'pg_ctl', ['-D', server.dataDir, '-o', options, '-l', server.file('server.log'), '-w', '-t', '60', 'start']);
      return server;
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  /** The CA that signed the server's certificate. */
  get caFile(): string {
    return this.file('ca.crt');
  }

  /** A CA of its own that signed nothing the server has. */
  get otherCaFile(): string {
    return this.file('other-ca.crt');
  }

  /** A URL of the server's `postgres` database at `host`, with `query` (sslmode, sslrootcert...). */
  url(host: string, query: Record<string, string>): string {
    const url = new URL(`postgres://postgres@${host}:${this.port}/postgres`);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url.toString();
  }

  /** Stops the server (immediate) and removes the folder. */
  async stop(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await serverTool(this.bin, this.dir, 'pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    await rm(this.dir, { recursive: true, force: true });
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  private file(name: string): string {
    return path.join(this.dir, name);
  }

  /** Two CAs, and a key and certificate for 127.0.0.1 (its only name) signed by the first. */
  private async makeCertificates(): Promise<void> {
    const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    for (const ca of ['ca', 'other-ca']) {
      await this.openssl(['req', '-x509', ...newKey, '-keyout', `${ca}.key`, '-out', `${ca}.crt`, '-days', '2', '-subj', `/CN=svc test ${ca}`]);
    }
    await this.openssl(['req', ...newKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
    await writeFile(this.file('server.ext'), 'subjectAltName = IP:127.0.0.1\n');
    const sign = ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-extfile', 'server.ext'];
    await this.openssl(['x509', '-req', '-in', 'server.csr', ...sign, '-out', 'server.crt', '-days', '2']);
    // PostgreSQL reads a key only its own user can read.
    await chmod(this.file('server.key'), 0o600);
    if (isRoot) await chown(this.file('server.key'), ...(await postgresIds()));
  }

  private async openssl(args: string[]): Promise<void> {
    await run('openssl', args, { cwd: this.dir, timeout: 60_000 });
  }
}
