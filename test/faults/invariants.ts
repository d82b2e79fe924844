// The checks every fault scenario ends with, read straight from the database: every acknowledged write
// is in the log, every run ends, no event is duplicated or skipped, and no step's outside effect ran
// more often than docs/workflows.md "Durability" allows (a journaled step never runs again).
import { expect } from 'chai';
import type pg from 'pg';
import { eventually } from '../support/http.js';
import { journalProblems, type JournalRow } from '../durability/helpers.js';

/** What the test was told was written: run ids answered with 201/202, global positions a reader was served. */
export class Acknowledged {
  readonly runIds = new Set<string>();
  readonly positions = new Set<number>();
}

export interface InvariantOptions {
  /** How long runs may take to end once the fault is gone. */
  settleMs: number;
  /** The statuses acknowledged runs must end in (default: completed). */
  endings?: string[];
  /** Shown when a check fails (the services' output). */
  diagnostics?: () => string;
}

const TERMINAL = ['completed', 'failed', 'aborted'];

async function expectAcknowledgedInLog(db: pg.Pool, acked: Acknowledged): Promise<void> {
  const runIds = [...acked.runIds];
  const { rows: started } = await db.query<{ stream_id: string }>(
    `SELECT stream_id FROM events WHERE stream_id = ANY($1::text[]) AND stream_position = 1 AND type = 'run_started'`,
    [runIds.map((id) => `run-${id}`)],
  );
  const found = new Set(started.map((r) => r.stream_id.slice('run-'.length)));
  expect(
    runIds.filter((id) => !found.has(id)),
    'acknowledged runs missing from the log',
  ).to.deep.equal([]);
  const positions = [...acked.positions];
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE global_position = ANY($1::bigint[])', [positions]);
  expect(rows[0]!.n, 'served global positions still in the log').to.equal(positions.length);
}

/** Every run in the database ends; acknowledged ones in one of `endings`. */
async function expectRunsEnded(db: pg.Pool, acked: Acknowledged, options: InvariantOptions): Promise<void> {
  let open: { id: string; status: string }[] = [];
  const ended = await eventually(
    async () => {
      ({ rows: open } = await db.query<{ id: string; status: string }>('SELECT id::text, status FROM svc_runs WHERE status <> ALL($1::text[])', [TERMINAL]));
      return open.length === 0;
    },
    options.settleMs,
    100,
  );
  expect(ended.ok, `runs not ended after ${ended.elapsedMs} ms: ${JSON.stringify(open.slice(0, 10))}\n${options.diagnostics?.() ?? ''}`).to.equal(true);
  const endings = options.endings ?? ['completed'];
  const { rows } = await db.query<{ id: string; status: string }>(
    'SELECT id::text, status FROM svc_runs WHERE id = ANY($1::uuid[]) AND status <> ALL($2::text[])',
    [[...acked.runIds], endings],
  );
  expect(rows, `acknowledged runs not ${endings.join('/')}`).to.deep.equal([]);
}

/** Streams gapless from 1, global positions unique, each run journal well formed and agreeing with svc_runs. */
async function expectLogWhole(db: pg.Pool): Promise<void> {
  const { rows: gaps } = await db.query(
    `SELECT stream_id, min(stream_position)::int AS first, max(stream_position)::int AS last, count(*)::int AS n
       FROM events GROUP BY stream_id HAVING min(stream_position) <> 1 OR max(stream_position) <> count(*)`,
  );
  expect(gaps, 'streams with a skipped or repeated position').to.deep.equal([]);
  const { rows: twice } = await db.query('SELECT global_position FROM events GROUP BY global_position HAVING count(*) > 1');
  expect(twice, 'global positions used twice').to.deep.equal([]);
  const { rows } = await db.query<{ stream_id: string; stream_position: string; type: string; agent_id: string; recorded_at: Date }>(
    `SELECT stream_id, stream_position, type, data->>'agent_id' AS agent_id, recorded_at FROM events WHERE stream_type = 'run' ORDER BY stream_id, stream_position`,
  );
  const journals = new Map<string, JournalRow[]>();
  for (const r of rows) {
    const journal = journals.get(r.stream_id) ?? journals.set(r.stream_id, []).get(r.stream_id)!;
    journal.push({ position: Number(r.stream_position), type: r.type, step: r.agent_id, recordedAt: r.recorded_at, payload: {} });
  }
  const problems = [...journals].flatMap(([stream, journal]) => journalProblems(journal).map((p) => `${stream}: ${p}`));
  expect(problems, 'run journals').to.deep.equal([]);
  const { rows: disagree } = await db.query(
    `SELECT r.id, r.status, e.type FROM svc_runs r
       JOIN LATERAL (SELECT type FROM events WHERE stream_id = 'run-' || r.id ORDER BY stream_position DESC LIMIT 1) e ON true
      WHERE r.status IN ('completed', 'failed', 'aborted') AND e.type <> 'run_' || r.status`,
  );
  expect(disagree, 'svc_runs says ended, the journal does not').to.deep.equal([]);
}

/** The durable fixture's effects: no attempt of a step after it was journaled; one ModelOp record per run that saved. */
async function expectEffectsWithinPromise(db: pg.Pool): Promise<void> {
  const { rows: hasTables } = await db.query<{ t: string | null }>(`SELECT to_regclass('durable_attempts')::text AS t`);
  if (hasTables[0]!.t === null) return;
  const { rows: late } = await db.query(
    `SELECT a.key, a.pid, a.at, e.recorded_at FROM durable_attempts a
       JOIN events e ON e.stream_id = 'run-' || a.run_id AND e.type = 'step_completed' AND e.data->>'agent_id' = a.step_id
      WHERE a.journaled_before OR a.at > e.recorded_at`,
  );
  expect(late, 'a journaled step ran again').to.deep.equal([]);
  const { rows: saved } = await db.query(
    `SELECT s.stream_id, (SELECT count(*)::int FROM durable_entries d WHERE 'run-' || d.run_id = s.stream_id) AS records
       FROM events s WHERE s.type = 'step_completed' AND s.data->>'agent_id' = 'save'`,
  );
  expect(
    saved.filter((r) => r.records !== 1),
    'one ModelOp record per run that journaled its save',
  ).to.deep.equal([]);
  const { rows: stray } = await db.query(
    `SELECT d.run_id FROM durable_entries d
      WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = 'run-' || d.run_id AND e.type = 'step_completed' AND e.data->>'agent_id' = 'save')`,
  );
  expect(stray, 'ModelOp records of runs that did not journal their save').to.deep.equal([]);
}

/** Every check, after the fault is gone; answers how many runs the database holds. */
export async function checkInvariants(db: pg.Pool, acked: Acknowledged, options: InvariantOptions): Promise<number> {
  await expectAcknowledgedInLog(db, acked);
  await expectRunsEnded(db, acked, options);
  await expectLogWhole(db);
  await expectEffectsWithinPromise(db);
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM svc_runs');
  return rows[0]!.n;
}
