// Durability tests' shared pieces: real `svc serve` child processes (killed on purpose), the CLI, the
// side-effect tables the fixture runners write, and readers of run journals straight from `events`.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { freePort } from '../support/db.js';
import { call, eventually } from '../support/http.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = path.join(REPO, 'test/durability/fixtures');
export const DURABLE_PROJECT = path.join(FIXTURES, 'durable');
export const REPLAY_PROJECT = path.join(FIXTURES, 'replay');
/** One key for every process, so a token minted by one is good on all of them. */
export const SIGNING_KEY = '86ab142b932cb7de9ec648af88e9453314c92f4cfe3f8f3da09ebf475f8b2919';
export const LEASE_MS = 1500;
export const CLAIM_INTERVAL_MS = 200;

/** Only what the child needs: the developer's own settings cannot leak in. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    SVC_SIGNING_KEY: SIGNING_KEY,
    SVC_LOG_LEVEL: 'warn',
    SVC_RUN_LEASE_MS: String(LEASE_MS),
    SVC_RUN_CLAIM_INTERVAL_MS: String(CLAIM_INTERVAL_MS),
    ...extra,
  };
}

/** The CLI from source (through tsx), or `built`: the compiled one `npm start` runs (no TypeScript loader registered). */
function cliEntry(options: { built?: boolean }): string[] {
  return options.built ? ['bin/svc.js'] : ['--import', 'tsx', 'src/cli/main.ts'];
}

/** A `svc serve` child process on loopback. */
export class ServiceProcess {
  output = '';
  readonly exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = once(child, 'exit').then(() => undefined);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the service and waits for /health (fails with its output when it does not come up). */
  static async start(databaseUrl: string, projectDir: string, env: Record<string, string> = {}, options: { built?: boolean } = {}): Promise<ServiceProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [...cliEntry(options), 'serve'], {
      cwd: REPO,
      env: childEnv({ DATABASE_URL: databaseUrl, PORT: String(port), SVC_PROJECT_DIR: projectDir, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`);
    running.add(service);
    const up = await eventually(async () => {
      if (!service.isRunning) return true;
      return fetch(`${service.url}/health`).then(
        (r) => r.ok,
        () => false,
      );
    }, 30_000, 50);
    if (!up.ok || !service.isRunning) {
      await service.kill();
      expect.fail(`the service did not come up:\n${service.output}`);
    }
    return service;
  }

  /** SIGKILL (a crash) by default; waits until the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.isRunning) this.child.kill(signal);
    await this.exited;
    running.delete(this);
  }

  /** SIGTERM, then SIGKILL if it does not leave within `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.isRunning) return this.kill();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    running.delete(this);
  }
}

const running = new Set<ServiceProcess>();

/** For after hooks: every service a test file started and did not stop. */
export async function killAllServices(): Promise<void> {
  await Promise.all([...running].map((service) => service.kill()));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `svc` CLI to the end (SIGKILL after `timeoutMs`). */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000, options: { built?: boolean } = {}): Promise<CliResult> {
  const child = spawn(process.execPath, [...cliEntry(options), ...args], { cwd: REPO, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

const copies = new Set<string>();
process.once('exit', () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A private copy of a fixture project (to change a runner), removed when the test process exits. */
export function copyProject(source: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-durability-'));
  cpSync(source, dir, { recursive: true });
  copies.add(dir);
  return dir;
}

/** The tables the `effect` runner writes: every attempt, and one row per idempotency key. */
export async function createSideEffectTables(db: pg.Pool): Promise<void> {
  await db.query(`
    CREATE TABLE durable_attempts (
      id               bigserial PRIMARY KEY,
      key              text NOT NULL,
      run_id           text NOT NULL,
      step_id          text NOT NULL,
      pid              integer NOT NULL,
      journaled_before boolean NOT NULL,
      at               timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE TABLE durable_side_effects (
      key      text PRIMARY KEY,
      run_id   text NOT NULL,
      step_id  text NOT NULL,
      attempts integer NOT NULL DEFAULT 1,
      first_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      last_at  timestamptz NOT NULL DEFAULT clock_timestamp()
    );`);
}

export interface Attempt {
  id: number;
  key: string;
  run_id: string;
  step_id: string;
  pid: number;
  journaled_before: boolean;
  at: Date;
}

export async function attemptsOf(db: pg.Pool, runId?: string): Promise<Attempt[]> {
  const { rows } = await db.query<Attempt>(
    `SELECT id::int AS id, key, run_id, step_id, pid, journaled_before, at FROM durable_attempts WHERE $1::text IS NULL OR run_id = $1 ORDER BY id`,
    [runId ?? null],
  );
  return rows;
}

export interface JournalRow {
  position: number;
  type: string;
  step: string;
  recordedAt: Date;
  payload: Record<string, unknown>;
}

/** A run's journal as stored, in stream order. */
export async function journalOf(db: pg.Pool, runId: string): Promise<JournalRow[]> {
  const { rows } = await db.query<{ stream_position: string; type: string; data: { agent_id: string; payload: Record<string, unknown> }; recorded_at: Date }>(
    `SELECT stream_position, type, data, recorded_at FROM events WHERE stream_id = $1 ORDER BY stream_position`,
    [`run-${runId}`],
  );
  return rows.map((r) => ({ position: Number(r.stream_position), type: r.type, step: r.data.agent_id, recordedAt: r.recorded_at, payload: r.data.payload }));
}

const TERMINAL = ['run_completed', 'run_failed', 'run_aborted'];
const TERMINAL_STATUSES = ['completed', 'failed', 'aborted'];

/**
 * What every journal must be, whoever wrote it: positions 1..n, one run_started first, at most one
 * terminal event and nothing after it, no step completed twice. Answers the problems found.
 */
export function journalProblems(journal: JournalRow[]): string[] {
  const problems: string[] = [];
  journal.forEach((e, i) => {
    if (e.position !== i + 1) problems.push(`position ${e.position} at index ${i}`);
  });
  if (journal[0]?.type !== 'run_started') problems.push(`first event is ${journal[0]?.type}`);
  if (journal.filter((e) => e.type === 'run_started').length !== 1) problems.push('run_started is not exactly once');
  const terminals = journal.filter((e) => TERMINAL.includes(e.type));
  if (terminals.length > 1) problems.push(`${terminals.length} terminal events`);
  if (terminals.length === 1 && journal.at(-1) !== terminals[0]) problems.push(`events after ${terminals[0]!.type}`);
  const completed = journal.filter((e) => e.type === 'step_completed').map((e) => e.step);
  for (const step of new Set(completed)) {
    const times = completed.filter((s) => s === step).length;
    if (times > 1) problems.push(`step ${step} completed ${times} times`);
  }
  return problems;
}

/** Fires a run without waiting (202 with the run descriptor); answers its id. */
export async function fireRun(baseUrl: string, token: string, input: Record<string, unknown>, workflow = 'durable'): Promise<string> {
  const result = await call(baseUrl, 'POST', `/api/workflows/${workflow}/runs?wait=false`, { token, json: input });
  expect(result.status, JSON.stringify(result.body)).to.equal(202);
  return result.body.id as string;
}

export async function runStatus(baseUrl: string, token: string, runId: string): Promise<string> {
  const result = await call(baseUrl, 'GET', `/api/runs/${runId}`, { token });
  expect(result.status, JSON.stringify(result.body)).to.equal(200);
  return result.body.status as string;
}

/** Status straight from the read model, for many runs at once. */
export async function statuses(db: pg.Pool, runIds: string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; status: string }>('SELECT id::text, status FROM svc_runs WHERE id = ANY($1::uuid[])', [runIds]);
  return new Map(rows.map((r) => [r.id, r.status]));
}

/** Waits until every run has one of `wanted` statuses; fails with the stragglers. */
export async function waitForStatus(db: pg.Pool, runIds: string[], wanted: string[], timeoutMs: number, diagnostics = () => ''): Promise<void> {
  let last = new Map<string, string>();
  const settled = (status: string | undefined) => wanted.includes(status ?? '') || TERMINAL_STATUSES.includes(status ?? '');
  const done = await eventually(async () => {
    last = await statuses(db, runIds);
    return runIds.every((id) => settled(last.get(id)));
  }, timeoutMs, 50);
  const stragglers = runIds.filter((id) => !wanted.includes(last.get(id) ?? '')).map((id) => `${id}: ${last.get(id) ?? 'missing'}`);
  expect(done.ok && stragglers.length === 0, `not ${wanted.join('/')} after ${done.elapsedMs} ms:\n${stragglers.join('\n')}\n${diagnostics()}`).to.equal(true);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function openPool(databaseUrl: string): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: 4 });
}
