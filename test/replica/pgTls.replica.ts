// `npm run test:replica`: ASVS 5.0 V12.3.1, V12.3.2 against a PostgreSQL with TLS on (a server of the
// test's own, see tlsServer.ts). svc's connections are encrypted and check the server's certificate and
// name; a certificate of another CA or for another name is refused; and the server refuses a plain
// connection, so nothing of svc's reaches it unencrypted.
import { expect } from 'chai';
import { createPool } from '../../src/db/pool.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { TlsServer } from './tlsServer.js';

const ENCRYPTED = 'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()';

describe('ASVS V12.3 svc and a PostgreSQL with TLS on', function () {
  this.timeout(60_000);
  let server: TlsServer;

  before(async function () {
    this.timeout(120_000);
    server = await TlsServer.start();
  });

  after(async function () {
    this.timeout(60_000);
    await killAllServices();
    await server?.stop();
  });

  /** The first answer of `sql` through svc's pool on `url`, or the error that refused it. */
  const throughPool = async (url: string, sql = ENCRYPTED): Promise<Record<string, unknown> | Error> => {
    const pool = createPool({ connectionString: url, max: 1, connectTimeoutMs: 10_000 });
    try {
      return (await pool.query(sql)).rows[0] as Record<string, unknown>;
    } catch (error) {
      return error as Error;
    } finally {
      await pool.end();
    }
  };

  it('V12.3.1 V12.3.2 svc’s pool with sslmode=verify-full and the server’s CA connects, and its connection is encrypted', async () => {
    const answer = await throughPool(server.url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: server.caFile }));
    expect(answer).not.to.be.instanceOf(Error);
    expect(answer).to.include({ ssl: true });
    expect((answer as { version: string }).version).to.match(/^TLSv1\.[23]$/);
  });

  it('V12.3.2 a certificate signed by a CA other than sslrootcert is refused', async () => {
    const answer = await throughPool(server.url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: server.otherCaFile }));
    expect(answer).to.be.instanceOf(Error);
    expect((answer as Error).message).to.match(/unable to (verify the first certificate|get local issuer certificate)|self.signed/i);
  });

  it('V12.3.2 sslmode=verify-full refuses a certificate that does not name the host connected to', async () => {
    // The certificate names 127.0.0.1 only; `localhost` reaches the same server.
    const answer = await throughPool(server.url('localhost', { sslmode: 'verify-full', sslrootcert: server.caFile }));
    expect(answer).to.be.instanceOf(Error);
    expect((answer as Error).message).to.match(/does not match certificate's altnames/);
  });

  it('V12.3.1 a plain connection is refused by the server (hostnossl reject): nothing reaches it unencrypted', async () => {
    const answer = await throughPool(server.url('127.0.0.1', { sslmode: 'disable' }), 'SELECT 1');
    expect(answer).to.be.instanceOf(Error);
    expect((answer as Error).message).to.match(/pg_hba\.conf rejects connection .*no encryption/);
  });

  it('V12.3.1 V12.3.2 svc serve with sslmode=verify-full runs on the server, every connection it holds encrypted', async () => {
    const url = server.url('127.0.0.1', { sslmode: 'verify-full', sslrootcert: server.caFile });
    await ServiceProcess.start(url, EXAMPLE_PROJECT);
    const answer = await throughPool(
      url,
      `SELECT count(*)::int AS connections, count(*) FILTER (WHERE s.ssl)::int AS encrypted,
              array_agg(DISTINCT a.application_name ORDER BY a.application_name) AS names
         FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
        WHERE a.application_name LIKE 'svc%' AND a.pid <> pg_backend_pid()`,
    );
    expect(answer).not.to.be.instanceOf(Error);
    const { connections, encrypted, names } = answer as { connections: number; encrypted: number; names: string[] };
    expect(connections, `svc's connections (${names})`).to.be.greaterThan(0);
    expect(encrypted).to.equal(connections);
  });
});
