// ASVS 5.0 V12.3 (encrypted communication between components) for the one backend svc always has,
// PostgreSQL: the connection string's `sslmode` reaches the driver on every connection the service
// opens (the pool, the LISTEN connection, the read replica's pool), a TLS connection is never downgraded
// to plain text, and a start that fails on TLS says so in its log (V16.3.4).
import { expect } from 'chai';
import pg from 'pg';
import { connectClient, connectionConfig, createPool } from '../../src/db/pool.js';
import { createTestDatabase } from '../support/db.js';
import { runCli } from '../support/serviceProcess.js';

/** The TLS settings pg derives for a connection string, as the service's connections are configured. */
function sslOf(url: string): unknown {
  const client = new pg.Client(connectionConfig(url));
  return (client as unknown as { connectionParameters: { ssl: unknown } }).connectionParameters.ssl;
}

/** `url` with `sslmode=<mode>` in its query. */
function withSslMode(url: string, mode: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('sslmode', mode);
  return parsed.toString();
}

describe('ASVS V12.3 encrypted communication with PostgreSQL', function () {
  this.timeout(30_000);
  let databaseUrl: string;

  before(async () => {
    databaseUrl = await createTestDatabase();
  });

  // pg 8 reads require and verify-ca as verify-full (with a warning that pg 9 will not): docs/operations.md says verify-full.
  it('V12.3.1 V12.3.2 sslmode=verify-full in DATABASE_URL makes pg use TLS and check the certificate; no-verify and disable are as named', () => {
    const url = 'postgres://svc@db.example.com:5432/svc';
    const ssl = sslOf(withSslMode(url, 'verify-full'));
    expect(ssl).to.be.an('object');
    expect((ssl as { rejectUnauthorized?: boolean }).rejectUnauthorized).not.to.equal(false);
    expect(sslOf(withSslMode(url, 'no-verify'))).to.deep.include({ rejectUnauthorized: false });
    expect(sslOf(withSslMode(url, 'disable'))).to.equal(false);
  });

  it('V12.3.1 a connection asked to use TLS is refused by a server without TLS rather than sent in plain text', async () => {
    const client = await connectClient(connectionConfig(databaseUrl));
    try {
      expect((await client.query('SHOW ssl')).rows[0].ssl, 'the test server runs without TLS').to.equal('off');
    } finally {
      await client.end();
    }
    const pool = createPool({ connectionString: withSslMode(databaseUrl, 'verify-full'), max: 1, connectTimeoutMs: 5000 });
    try {
      await expectRejection(pool.query('SELECT 1'), /does not support SSL/);
    } finally {
      await pool.end();
    }
    const plain = createPool({ connectionString: withSslMode(databaseUrl, 'disable'), max: 1 });
    try {
      expect((await plain.query('SELECT 1 AS one')).rows).to.deep.equal([{ one: 1 }]);
    } finally {
      await plain.end();
    }
  });

  it('V16.3.4 V12.3.1 svc serve with sslmode=verify-full against a server without TLS exits non-zero and logs why', async () => {
    const result = await runCli(['serve'], { DATABASE_URL: withSslMode(databaseUrl, 'verify-full'), PORT: '0', SVC_LOG_LEVEL: 'info' });
    expect(result.code).not.to.equal(0);
    expect(`${result.stdout}\n${result.stderr}`).to.match(/does not support SSL/);
  });
});

async function expectRejection(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason as Error,
  );
  expect(error, 'a rejection').to.be.instanceOf(Error);
  expect(error!.message).to.match(pattern);
}
