// Shared pieces of the benchmarks: a fresh migrated database each, timing, percentiles, tables, RESULTS.md.
import { readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from '../src/db/migrate.js';
import { createPool, withDatabase, type Pool } from '../src/db/pool.js';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const RESULTS_FILE = path.join(BENCH_DIR, 'RESULTS.md');
/** The channel of the latency benchmark's bare LISTEN/NOTIFY reference. */
export const PING_CHANNEL = 'bench_ping';
/** What the latency benchmark's writer process reports on its last stdout line. */
export interface WriterResult {
  sent: number;
  failed: number;
  /** Per call, in the writer, after its first second. */
  callP50: number;
  callP99: number;
  elapsedMs: number;
}

export const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** What one benchmark prints and records: a markdown section body (tables and notes). */
export interface BenchReport {
  title: string;
  markdown: string;
}

export interface Benchmark {
  name: string;
  description: string;
  /** Longer than bench/run.ts's default limit (a large setup). */
  timeoutMs?: number;
  run(): Promise<BenchReport>;
}

export interface BenchDatabase {
  url: string;
  pool: Pool;
  /** The pool's application_name, which names its backends in pg_stat_activity. */
  applicationName: string;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `svc_bench_<name>` (dropping any leftover), migrates it, and opens a 10-connection pool. */
export async function createBenchDatabase(name: string, poolSize = 10): Promise<BenchDatabase> {
  const database = `svc_bench_${name}`;
  await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE ${database}`);
  const url = withDatabase(SERVER_URL, database);
  const applicationName = `bench-${name}`;
  const pool = createPool({ connectionString: url, max: poolSize, applicationName });
  await migrate(pool);
  return {
    url,
    pool,
    applicationName,
    async drop() {
      await pool.end().catch(() => undefined);
      await adminQuery(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    },
  };
}

/** Wall-clock milliseconds shared by every process on the machine, with sub-millisecond resolution. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Runs `total` calls of `call(i)` with `concurrency` in flight; answers each call's duration (ms). */
export async function runClosedLoop(
  total: number,
  concurrency: number,
  call: (i: number) => Promise<unknown>,
): Promise<{ elapsedMs: number; latencies: Float64Array }> {
  const latencies = new Float64Array(total);
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    for (let i = next++; i < total; i = next++) {
      const t0 = performance.now();
      await call(i);
      latencies[i] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { elapsedMs: performance.now() - started, latencies };
}

export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
export const fmtMs = (n: number): string => (n < 10 ? n.toFixed(2) : n.toFixed(1));
export const fmtRatio = (n: number): string => n.toFixed(2);

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** The machine line every result carries: cores, CPU, memory, Node and PostgreSQL. */
export async function describeMachine(): Promise<string> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ version: string; sc: string; fsync: string; sb: string; av: string }>(
      `SELECT current_setting('server_version') AS version, current_setting('synchronous_commit') AS sc,
              current_setting('fsync') AS fsync, current_setting('shared_buffers') AS sb, current_setting('autovacuum') AS av`,
    );
    const pgInfo = rows[0]!;
    const cpus = os.cpus();
    const memGiB = (os.totalmem() / 2 ** 30).toFixed(1);
    return (
      `nproc ${os.availableParallelism()}, ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${memGiB} GiB memory, ` +
      `Node ${process.version}, PostgreSQL ${pgInfo.version} (fsync=${pgInfo.fsync}, synchronous_commit=${pgInfo.sc}, ` +
      `shared_buffers=${pgInfo.sb}, autovacuum=${pgInfo.av}), server ${new URL(SERVER_URL).host}`
    );
  } finally {
    await client.end();
  }
}

/**
 * Replaces (or appends) the section of one benchmark in RESULTS.md, between its markers, so that
 * running one benchmark leaves the others' figures in place.
 */
export async function recordResult(name: string, body: string): Promise<void> {
  const begin = `<!-- bench:${name} -->`;
  const end = `<!-- /bench:${name} -->`;
  let text = await readFile(RESULTS_FILE, 'utf8').catch(() => '# Benchmark results\n');
  const block = `${begin}\n${body.trim()}\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from >= 0 && to > from) text = text.slice(0, from) + block + text.slice(to + end.length);
  else text = `${text.trimEnd()}\n\n${block}\n`;
  await writeFile(RESULTS_FILE, text.endsWith('\n') ? text : `${text}\n`);
}

/** A realistic event body: a run of a named workflow with a small JSON input. */
export function sampleRunStarted(i: number): { runId: string; workflow: string; input: { name: string; values: number[]; priority: string } } {
  return {
    runId: `run-${i}`,
    workflow: 'invoice-approval',
    input: { name: `customer-${i % 977}`, values: [1, 2, 3, 4, 5], priority: i % 3 === 0 ? 'high' : 'normal' },
  };
}

export const SAMPLE_METADATA = { actor: 'user-bench', tenant: 'acme', requestId: 'req-bench' };

/** A reference server of a benchmark, listening on a free loopback port. */
export interface ReferenceServer {
  url: string;
  close(): Promise<void>;
}

/** Listens on a free loopback port; close ends open sockets, the server, then the pool. */
export async function serveOnLoopback(server: Server, pool: { end(): Promise<void> }): Promise<ReferenceServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await pool.end();
    },
  };
}
