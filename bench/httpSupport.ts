// Shared pieces of the HTTP benchmarks: the service as a child process, temporary projects, autocannon runs, timings.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { BENCH_DIR, fmtInt, fmtMs, SERVER_URL } from './support.js';

/** What the service process prints on its one stdout line once it listens. */
export interface ServiceReady {
  url: string;
  referenceUrl?: string;
  /** What the reference runs, for the report (the models reference's list statement). */
  referenceNote?: string;
}

/** How the parent asks bench/serviceProcess.ts to start (passed as JSON in BENCH_SERVICE_CONFIG). */
export interface ServiceConfig {
  databaseUrl: string;
  projectDir: string;
  /** Extra service settings (environment names of src/config/schema.ts). */
  env?: Record<string, string>;
  /** A bare reference app started in the same process, on its own port. */
  reference?: 'models' | 'sse' | 'journal';
}

export interface ChildServer extends ServiceReady {
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 15_000;

/** `--quick` (or BENCH_QUICK=1) shortens every HTTP phase; BENCH_HTTP_WARMUP_S / BENCH_HTTP_DURATION_S set them. */
export const isQuick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
export const WARM_UP_S = Number(process.env.BENCH_HTTP_WARMUP_S ?? (isQuick ? 1 : 3));
export const DURATION_S = Number(process.env.BENCH_HTTP_DURATION_S ?? (isQuick ? 3 : 10));
/** Service log level: `info` is the production default and logs no successful request. */
export const SERVICE_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident memory of a process (MiB), from /proc. */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function logFileFor(name: string): string {
  const dir = path.join(os.tmpdir(), 'svc-bench-logs');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}-${Date.now()}.log`);
}

/** Stops a child by its pid: SIGTERM, then SIGKILL after the grace period. */
export function stopChild(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts svc (src/main.ts startService) in a child process, so that the load generator has its own event loop. */
export async function startServiceProcess(name: string, config: ServiceConfig): Promise<ChildServer> {
  const logFile = logFileFor(`svc-${name}`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(BENCH_DIR, 'serviceProcess.ts')], {
    cwd: path.join(BENCH_DIR, '..'),
    env: { ...process.env, BENCH_SERVICE_CONFIG: JSON.stringify(config), SVC_LOG_LEVEL: SERVICE_LOG_LEVEL },
    stdio: ['ignore', 'pipe', fd],
  });
  closeSync(fd);
  try {
    const ready = await new Promise<ServiceReady>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`svc did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line && out.includes('\n')) {
          clearTimeout(timer);
          resolve(JSON.parse(line) as ServiceReady);
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`svc exited during start (${code ?? signal})`));
      });
    });
    return { ...ready, pid: child.pid!, logFile, stop: () => stopChild(child) };
  } catch (error) {
    await stopChild(child, 1000);
    throw new Error(`${(error as Error).message}; log ${logFile}:\n${tail(logFile)}`);
  }
}

/** Starts a peer server (`node <script> ...args` in `dir`) and waits until GET /health answers 200; an `undefined` in `env` unsets the caller's. */
export async function startPeerProcess(
  name: string,
  dir: string,
  script: string,
  env: Record<string, string | undefined>,
  url: string,
  args: readonly string[] = [],
): Promise<ChildServer> {
  const logFile = logFileFor(name);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [script, ...args], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = String(code ?? signal)));
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && exited === undefined) {
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { url, pid: child.pid!, logFile, stop: () => stopChild(child) };
    await sleep(250);
  }
  await stopChild(child, 1000);
  throw new Error(`${name} ${exited !== undefined ? `exited during start (${exited})` : 'did not answer /health'}; log ${logFile}:\n${tail(logFile)}`);
}

/** A free loopback port (for peers that take a fixed PORT). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A temporary project folder holding the given files (relative path -> text); removed with `remove()`. */
export function writeProject(name: string, files: Record<string, string>): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), `svc-bench-${name}-`));
  for (const [relative, text] of Object.entries(files)) {
    const file = path.join(dir, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a statement on another database of the bench server with a short-lived client. */
export async function queryOn<T extends pg.QueryResultRow>(databaseUrl: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function adminQuery(sql: string): Promise<void> {
  await queryOn(SERVER_URL, sql);
}

/** One JSON request; answers status and parsed body (text when it is not JSON). */
export async function requestJson(
  url: string,
  options: { method?: string; json?: unknown; form?: Record<string, string>; token?: string } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  let body: string | undefined;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(url, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed };
}

export const BENCH_ADMIN = { email: 'bench-admin@example.com', password: 'bench password, long enough' };

/** POST /auth/bootstrap on a fresh database: the superadmin's token. */
export async function bootstrapAdmin(baseUrl: string): Promise<string> {
  const result = await requestJson(`${baseUrl}/auth/bootstrap`, { json: BENCH_ADMIN });
  if (result.status !== 200) throw new Error(`bootstrap answered ${result.status}: ${JSON.stringify(result.body)}`);
  return result.body.access_token as string;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationS?: number;
  /** A fixed number of requests instead of a duration. */
  amount?: number;
  /** Requests per second over all connections (open loop); unset: as fast as answers come. */
  overallRate?: number;
}

export interface LoadResult {
  /** autocannon's mean of per-second samples (as in the peers' harness). */
  rps: number;
  total: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p99: number;
  max: number;
  durationS: number;
}

/** One autocannon run in this process (the server is another process). */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body !== undefined ? { body: options.body } : {}),
    connections: options.connections,
    ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.durationS ?? DURATION_S }),
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
  });
  return {
    rps: result.requests.average,
    total: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    durationS: result.duration,
  };
}

/** A warm-up run (not reported) followed by the measured one. */
export async function warmAndMeasure(options: LoadOptions): Promise<LoadResult> {
  if (WARM_UP_S > 0) await runLoad({ ...options, durationS: WARM_UP_S });
  return runLoad(options);
}

/** "0 errors" or what went wrong, for a table cell. */
export function describeFailures(r: LoadResult): string {
  const parts = [
    r.non2xx ? `${fmtInt(r.non2xx)} non-2xx` : '',
    r.errors ? `${fmtInt(r.errors)} errors` : '',
    r.timeouts ? `${fmtInt(r.timeouts)} timeouts` : '',
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'none';
}

export const loadRow = (label: string, r: LoadResult): string[] => [
  label,
  `**${fmtInt(r.rps)}**`,
  fmtMs(r.p50),
  fmtMs(r.p99),
  fmtMs(r.max),
  describeFailures(r),
];
export const LOAD_HEADER = ['job', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'failures'];

/** Means of the rounds' rates and percentiles; max is the worst, counts are summed. */
export function meanLoad(runs: readonly LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => runs.reduce((total, r) => total + pick(r), 0);
  const avg = (pick: (r: LoadResult) => number) => sum(pick) / runs.length;
  return {
    rps: avg((r) => r.rps),
    total: sum((r) => r.total),
    ok2xx: sum((r) => r.ok2xx),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    p50: avg((r) => r.p50),
    p99: avg((r) => r.p99),
    max: Math.max(...runs.map((r) => r.max)),
    durationS: sum((r) => r.durationS),
  };
}

/** Polls `count()` until it answers 0 (or the limit passes); answers how long that took. */
export async function waitUntilZero(count: () => Promise<number>, limitMs = 180_000): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < limitMs) {
    if ((await count()) === 0) return Date.now() - started;
    await sleep(200);
  }
  throw new Error(`still pending after ${limitMs / 1000} s`);
}
