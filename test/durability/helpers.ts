// Durability tests' shared pieces: the fixture projects, the side-effect tables their runners write,
// and readers of run journals and statuses straight from the database.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { call, eventually } from '../support/http.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const DURABLE_PROJECT = path.join(FIXTURES, 'durable');
export const REPLAY_PROJECT = path.join(FIXTURES, 'replay');

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
      -- When the runner was entered, by its process's clock: its query may wait for a connection.
      started_at       timestamptz NOT NULL,
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
  started_at: Date;
  at: Date;
}

export async function attemptsOf(db: pg.Pool, runId?: string): Promise<Attempt[]> {
  const { rows } = await db.query<Attempt>(
    `SELECT id::int AS id, key, run_id, step_id, pid, journaled_before, started_at, at FROM durable_attempts WHERE $1::text IS NULL OR run_id = $1 ORDER BY id`,
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
  const done = await eventually(
    async () => {
      last = await statuses(db, runIds);
      return runIds.every((id) => settled(last.get(id)));
    },
    timeoutMs,
    50,
  );
  const stragglers = runIds.filter((id) => !wanted.includes(last.get(id) ?? '')).map((id) => `${id}: ${last.get(id) ?? 'missing'}`);
  expect(done.ok && stragglers.length === 0, `not ${wanted.join('/')} after ${done.elapsedMs} ms:\n${stragglers.join('\n')}\n${diagnostics()}`).to.equal(true);
}

export function openPool(databaseUrl: string): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: 4 });
}
