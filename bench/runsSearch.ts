// Benchmark (issue 18): GET /api/runs over 1,000,000 runs: filtered first pages and deep keyset pages, per
// page p99 over HTTP, with the plans; the reference is the OFFSET query the route ran before, on the same data.
import http from 'node:http';
import os from 'node:os';
import type { Pool, Queryable } from '../src/db/pool.js';
import { searchRuns, type RunSearch } from '../src/runs/queries.js';
import { encodeCursor } from '../src/runs/search.js';
import { RUN_STATUSES } from '../src/runs/state.js';
import { bootstrapAdmin, isQuick, startServiceProcess, writeProject } from './httpSupport.js';
import { createBenchDatabase, describeMachine, fmtInt, fmtMs, markdownTable, summarize, type Benchmark, type Summary } from './support.js';

const RUNS = Number(process.env.BENCH_RUNS_SEARCH_RUNS ?? 1_000_000);
const SAMPLES = isQuick ? 40 : 200;
const TARGET_P99_MS = 20;
const START = '2026-01-01T00:00:00Z';

/** 2% failed, 3% aborted, 5% waiting_human, the rest completed; 20 workflows, 1000 principals, one run a second. */
const SEED_SQL = `INSERT INTO svc_runs (id, workflow, schema_version, status, input, output, error, status_code, current_step, principal_id, tenant,
    approval, pause_requested, last_seq, created_at, updated_at)
  SELECT gen_random_uuid(), 'wf-' || (g % 20), 'v1',
    CASE WHEN g % 50 = 0 THEN 'failed' WHEN g % 33 = 0 THEN 'aborted' WHEN g % 20 = 0 THEN 'waiting_human' ELSE 'completed' END,
    jsonb_build_object('n', g), jsonb_build_object('ok', true), NULL, 201, 'done', 'user-' || (g % 1000), NULL, NULL, false, 4,
    $2::timestamptz - g * interval '1 second', $2::timestamptz - g * interval '1 second' + interval '2 seconds'
  FROM generate_series($1::int * 100000 + 1, least(($1::int + 1) * 100000, $3::int)) g`;

/** The statement GET /api/runs ran before keyset search (db/0004 indexes, OFFSET paging). */
const OFFSET_SQL = `SELECT id, workflow, schema_version, status, input, output, error, status_code, current_step, principal_id, tenant,
    approval, pause_requested, last_seq, created_at, updated_at FROM svc_runs
  WHERE ($1::text IS NULL OR principal_id = $1) AND tenant IS NOT DISTINCT FROM $2
    AND ($3::text IS NULL OR workflow = $3) AND ($4::text IS NULL OR status = $4)
  ORDER BY created_at DESC, id DESC LIMIT 100 OFFSET $5`;

const ADMIN_SEARCH: RunSearch = { principalId: null, tenant: null, statuses: RUN_STATUSES, limit: 101, offset: 0 };

/**
 * The pages are fetched with node:http over one kept-alive connection: fetch()'s WHATWG streams cost
 * the client up to 20 ms at the tail of a 70 KB answer (measured on 2026-11-26: p99 23-31 ms through
 * fetch where the service's own p99 was 7-11 ms), which would be the bench's latency, not the
 * service's. The fetch() job stays in the table as a reference.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function getPage(url: string, token: string): Promise<{ status: number; nextCursor: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
        response.on('data', () => undefined);
        response.on('error', reject);
        response.on('end', () => {
          const next = response.headers['x-next-cursor'];
          resolve({ status: response.statusCode ?? 0, nextCursor: typeof next === 'string' ? next : undefined });
        });
      })
      .on('error', reject);
  });
}

async function getPageByFetch(url: string, token: string): Promise<{ status: number }> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  return response;
}

async function timeAll(urls: readonly string[], token: string, get: (url: string, token: string) => Promise<{ status: number }> = getPage): Promise<Summary> {
  const took: number[] = [];
  for (const url of urls) {
    const t0 = performance.now();
    const { status } = await get(url, token);
    took.push(performance.now() - t0);
    if (status !== 200) throw new Error(`${url} answered ${status}`);
  }
  return summarize(took);
}

/** Every page of a search by cursor, as URLs (walked once to learn the cursors). */
async function cursorWalk(base: string, query: string, token: string, maxPages: number): Promise<string[]> {
  const urls: string[] = [];
  for (let url: string | undefined = `${base}/api/runs?${query}`; url && urls.length < maxPages;) {
    urls.push(url);
    const { nextCursor } = await getPage(url, token);
    url = nextCursor ? `${base}/api/runs?${query}&cursor=${nextCursor}` : undefined;
  }
  return urls;
}

/** The cursor that starts a page `depth` runs deep in the newest-first order of `search`. */
async function cursorAt(pool: Pool, search: RunSearch, depth: number): Promise<string> {
  const [row] = await searchRuns(pool, { ...search, limit: 1, offset: depth - 1 });
  return encodeCursor({ createdAt: row!.created_at, id: row!.id });
}

/** The plan of the statement searchRuns sends for `search` (EXPLAIN ANALYZE, without costs). */
async function planOf(pool: Pool, search: RunSearch): Promise<string> {
  let plan = '';
  const explaining: Queryable = {
    query: (async (text: string, params: unknown[]) => {
      const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${text}`, params);
      plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      return { rows: [] };
    }) as Queryable['query'],
  };
  await searchRuns(explaining, search);
  return plan;
}

/** The search statement alone (searchRuns on the bench's pool), at the same cursor depths as the HTTP jobs. */
async function searchSqlOnly(pool: Pool, search: RunSearch, depths: readonly number[]): Promise<Summary> {
  const positions = await Promise.all(depths.map(async (d) => (d === 0 ? undefined : (await searchRuns(pool, { ...search, limit: 1, offset: d - 1 }))[0])));
  const took: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const row = positions[i % positions.length];
    const t0 = performance.now();
    await searchRuns(pool, { ...search, after: row && { createdAt: row.created_at, id: row.id } });
    took.push(performance.now() - t0);
  }
  return summarize(took);
}

async function offsetReference(pool: Pool, status: string | null, depths: readonly number[], samples: number): Promise<Summary> {
  const took: number[] = [];
  for (const depth of depths)
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      await pool.query(OFFSET_SQL, [null, null, null, status, depth]);
      took.push(performance.now() - t0);
    }
  return summarize(took);
}

async function seed(pool: Pool): Promise<void> {
  for (let chunk = 0; chunk * 100_000 < RUNS; chunk++) await pool.query(SEED_SQL, [chunk, START, RUNS]);
  await pool.query('VACUUM ANALYZE svc_runs');
  // The seed's write-back would otherwise be spread over the measurement (checkpoint_completion_target):
  // a page read would wait behind 500 MB of the bench's own WAL, which is not what search costs.
  await pool.query('CHECKPOINT');
}

export const runsSearchBenchmark: Benchmark = {
  name: 'runs-search',
  description: `GET /api/runs over ${fmtInt(RUNS)} runs: status=failed and deep cursor pages, p99 per page, vs the OFFSET query before`,
  async run() {
    const db = await createBenchDatabase('runs_search', 2);
    const project = writeProject('runs-search', {});
    const svc = await startServiceProcess('runs-search', { databaseUrl: db.url, projectDir: project.dir });
    try {
      const token = await bootstrapAdmin(svc.url);
      // After the service started: its boot has settled svc_runs, which the bench then fills directly.
      await seed(db.pool);
      console.error(`  seeded ${fmtInt(RUNS)} runs`);
      const failed: RunSearch = { ...ADMIN_SEARCH, statuses: ['failed'] };
      const allDepths = [0, 10_000, 100_000, 500_000, RUNS - 1000].filter((d) => d < RUNS);
      const failedDepths = [0, Math.floor(RUNS / 100), Math.floor(RUNS / 50) - 200];
      const deep = async (search: RunSearch, query: string, depths: readonly number[]) =>
        (await Promise.all(depths.map(async (d) => (d === 0 ? '' : `&cursor=${await cursorAt(db.pool, search, d)}`)))).map(
          (cursor) => `${svc.url}/api/runs?${query}${cursor}`,
        );
      const repeat = (urls: readonly string[]) => Array.from({ length: SAMPLES }, (_, i) => urls[i % urls.length]!);
      // The service's JIT and the connection warm up on pages that are not measured.
      await timeAll(repeat([`${svc.url}/api/runs?status=failed`, `${svc.url}/api/runs`]).slice(0, 100), token);
      const rows: [string, Summary][] = [
        ['status=failed, first page', await timeAll(repeat([`${svc.url}/api/runs?status=failed`]), token)],
        ['status=failed, every page by cursor (walk)', await timeAll(await cursorWalk(svc.url, 'status=failed', token, 1000), token)],
        [`status=failed, cursor at depth ${failedDepths.join(' / ')}`, await timeAll(repeat(await deep(failed, 'status=failed', failedDepths)), token)],
        [`all runs, cursor at depth ${allDepths.map(fmtInt).join(' / ')}`, await timeAll(repeat(await deep(ADMIN_SEARCH, '', allDepths)), token)],
        [
          'workflow=wf-7&status=failed,aborted, every page (walk)',
          await timeAll(await cursorWalk(svc.url, 'workflow=wf-7&status=failed,aborted', token, 1000), token),
        ],
        ['search SQL only, status=failed, same depths', await searchSqlOnly(db.pool, failed, failedDepths)],
        ['search SQL only, all runs, same depths', await searchSqlOnly(db.pool, ADMIN_SEARCH, allDepths)],
        ['reference: GET /auth/me (the same HTTP and token check, no query)', await timeAll(repeat([`${svc.url}/auth/me`]), token)],
        [
          'reference: status=failed, first page, read with fetch() instead of node:http',
          await timeAll(repeat([`${svc.url}/api/runs?status=failed`]), token, getPageByFetch),
        ],
        ['reference: old OFFSET SQL, status=failed, same depths (SQL only)', await offsetReference(db.pool, 'failed', failedDepths, isQuick ? 3 : 10)],
        ['reference: old OFFSET SQL, all runs, same depths (SQL only)', await offsetReference(db.pool, null, allDepths, isQuick ? 2 : 5)],
      ];
      const plans = [
        [
          `status=failed, the page after a cursor ${fmtInt(Math.floor(RUNS / 50) - 200)} deep`,
          await planOfCursor(db.pool, failed, Math.floor(RUNS / 50) - 200),
        ],
        [`all statuses, the page after a cursor ${fmtInt(RUNS / 2)} deep`, await planOfCursor(db.pool, ADMIN_SEARCH, RUNS / 2)],
      ];
      return { title: 'runs-search', markdown: await report(rows, plans) };
    } finally {
      agent.destroy();
      await svc.stop();
      project.remove();
      await db.drop();
    }
  },
};

async function planOfCursor(pool: Pool, search: RunSearch, depth: number): Promise<string> {
  const [row] = await searchRuns(pool, { ...search, limit: 1, offset: depth - 1 });
  return planOf(pool, { ...search, after: { createdAt: row!.created_at, id: row!.id } });
}

async function report(rows: readonly [string, Summary][], plans: readonly string[][]): Promise<string> {
  const worst = Math.max(...rows.filter(([label]) => !label.startsWith('reference') && !label.includes('SQL only')).map(([, s]) => s.p99));
  return [
    '## 9. Run search over 1,000,000 runs (`npm run bench -- runs-search`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}. ${fmtInt(RUNS)} runs in svc_runs (bulk insert), admin caller, pages of 100, one request at a time over one kept-alive HTTP connection (node:http; client-side time: auth, query, JSON).`,
    '',
    markdownTable(
      ['job', 'pages', 'p50 ms', 'p99 ms', 'max ms'],
      rows.map(([label, s]) => [label, fmtInt(s.count), fmtMs(s.p50), fmtMs(s.p99), fmtMs(s.max)]),
    ),
    '',
    `Worst p99 of the HTTP search jobs: ${fmtMs(worst)} ms (target: under ${TARGET_P99_MS} ms for any page): ${worst < TARGET_P99_MS ? 'met' : 'NOT met'}. Load average during the run: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')} (1 / 5 / 15 min).`,
    '',
    ...plans.flatMap(([label, plan]) => [`Plan, ${label}:`, '', '```', plan!, '```', '']),
  ].join('\n');
}
