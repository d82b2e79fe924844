// Benchmark 6 (issue 4): model CRUD over HTTP, list of 100 and create, against a bare express + pg app in the same process.
import { randomBytes } from 'node:crypto';
import type { Pool } from '../src/db/pool.js';
import { ITEM_INDEXED_LIST_SQL } from './referenceModels.js';
import { createBenchDatabase, describeMachine, fmtInt, fmtMs, fmtRatio, markdownTable, type Benchmark } from './support.js';
import {
  bootstrapAdmin,
  describeFailures,
  DURATION_S,
  LOAD_HEADER,
  loadRow,
  requestJson,
  SERVICE_LOG_LEVEL,
  startServiceProcess,
  WARM_UP_S,
  meanLoad,
  warmAndMeasure,
  writeProject,
  type LoadOptions,
  type LoadResult,
} from './httpSupport.js';

const CONNECTIONS = 50;
const SEED_RECORDS = Number(process.env.BENCH_MODELS_RECORDS ?? 10_000);
const TARGET_LIST_RATIO = 0.8;

/** The same columns as the peers' baseline `items` table. */
const ITEM_MODEL = `kind: ModelDefinition
metadata:
  name: Item
  schema_version: v1
  description: The models benchmark's record (the columns of the peers' baseline items table).
spec:
  tablename: items
  datasource: primary
  fields:
    - {name: id, type: uuid, primary_key: true, input: false}
    - {name: name, type: string, required: true}
    - {name: description, type: text, required: true}
    - {name: price, type: integer, required: true}
    - {name: created_at, type: timestamp, input: false}
  api:
    crud: [list, read, create]
`;

/** Item with its description marked personal: sealed per record with the record's own data key (docs/privacy.md). */
const SEALED_ITEM_MODEL = ITEM_MODEL.replace('name: Item', 'name: SealedItem')
  .replace('tablename: items', 'tablename: sealed_items')
  .replace('{name: description, type: text, required: true}', '{name: description, type: text, required: true, personal: true}');

const ITEM_BODY = JSON.stringify({ name: 'item-bench', description: 'description of a bench item 5f4dcc3b5aa765d61d8327deb882cf99', price: 1234 });

type Results = Record<string, LoadResult[]>;

/** Runs the jobs in the given order (a CHECKPOINT before each); answers each job's rounds. */
async function runSchedule(jobs: Record<string, LoadOptions>, order: readonly string[], checkpoint: () => Promise<unknown>): Promise<Results> {
  const results: Results = {};
  for (const job of order) {
    await checkpoint();
    const result = await warmAndMeasure(jobs[job]!);
    (results[job] ??= []).push(result);
    console.error(`  ${job}: ${fmtInt(result.rps)} req/s, p99 ${fmtMs(result.p99)} ms (${describeFailures(result)})`);
  }
  return results;
}

export const modelsBenchmark: Benchmark = {
  name: 'models',
  description: `GET /models/item/?limit=100 and POST /models/item/ at ${CONNECTIONS} connections vs bare express + pg in the same process`,
  async run() {
    const db = await createBenchDatabase('models', 2);
    const project = writeProject('models', { 'models/item.yaml': ITEM_MODEL, 'models/sealed_item.yaml': SEALED_ITEM_MODEL });
    // Encryption on, as production runs it: a key-encryption key of its own.
    const env = { SVC_DATA_KEY: randomBytes(32).toString('hex') };
    const svc = await startServiceProcess('models', { databaseUrl: db.url, projectDir: project.dir, reference: 'models', env });
    try {
      const token = await bootstrapAdmin(svc.url);
      const auth = { authorization: `Bearer ${token}` };
      const json = { 'content-type': 'application/json' };
      const sample = await requestJson(`${svc.url}/models/item/`, { json: JSON.parse(ITEM_BODY), token });
      if (sample.status !== 201 || typeof sample.body.id !== 'string')
        throw new Error(`POST /models/item/ answered ${sample.status}: ${JSON.stringify(sample.body)}`);
      const sealed = await requestJson(`${svc.url}/models/sealeditem/`, { json: JSON.parse(ITEM_BODY), token });
      if (sealed.status !== 201 || sealed.body.description !== JSON.parse(ITEM_BODY).description)
        throw new Error(`POST /models/sealeditem/ answered ${sealed.status}: ${JSON.stringify(sealed.body)}`);
      const checkpoint = () => db.pool.query('CHECKPOINT');

      const postHeaders = { ...auth, ...json };
      const creates = await runSchedule(
        {
          'svc create': { url: `${svc.url}/models/item/`, method: 'POST', headers: postHeaders, body: ITEM_BODY, connections: CONNECTIONS },
          'bare insert': { url: `${svc.referenceUrl}/items`, method: 'POST', headers: json, body: ITEM_BODY, connections: CONNECTIONS },
          'svc create (personal field)': {
            url: `${svc.url}/models/sealeditem/`,
            method: 'POST',
            headers: postHeaders,
            body: ITEM_BODY,
            connections: CONNECTIONS,
          },
        },
        ['svc create', 'bare insert', 'svc create (personal field)'],
        checkpoint,
      );

      const count = async () => Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM items')).rows[0]!.n);
      const created = await count();
      // Set-based, so seeding takes no time: the list reads the table only, and these rows look like the created ones.
      await db.pool.query(
        `INSERT INTO items (id, name, description, price, created_at)
         SELECT gen_random_uuid(), 'item-' || g, 'description of item ' || g || ' ' || md5(g::text), (g * 37) % 10000, now()
         FROM generate_series(1, $1::int) g`,
        [Math.max(0, SEED_RECORDS - created)],
      );
      const records = await count();
      await db.pool.query('VACUUM ANALYZE items');
      const listSql = svc.referenceNote ?? '';
      // No tenant: the statement says `svc_tenant IS NULL` inline; its parameters are limit and offset.
      const plans = { svc: await planOf(db.pool, listSql, [100, 0]), indexed: await planOf(db.pool, ITEM_INDEXED_LIST_SQL, []) };
      const list = await requestJson(`${svc.url}/models/item/?limit=100`, { token });
      const bareList = await requestJson(`${svc.referenceUrl}/items`);
      const indexedList = await requestJson(`${svc.referenceUrl}/items-indexed`);
      const firstIds = [list, bareList, indexedList].map((r) => (Array.isArray(r.body) && r.body.length === 100 ? r.body[0].id : `${r.status}`));
      if (list.status !== 200 || new Set(firstIds).size !== 1) throw new Error(`the lists differ: ${firstIds.join(', ')}`);
      const lists = await runSchedule(
        {
          svc: { url: `${svc.url}/models/item/?limit=100`, headers: auth, connections: CONNECTIONS },
          bare: { url: `${svc.referenceUrl}/items`, connections: CONNECTIONS },
          indexed: { url: `${svc.referenceUrl}/items-indexed`, connections: CONNECTIONS },
        },
        ['svc', 'bare', 'indexed', 'bare', 'svc'],
        checkpoint,
      );
      return { title: 'models', markdown: await report(lists, creates, { created, records }, listSql, plans) };
    } finally {
      await svc.stop();
      project.remove();
      await db.drop();
    }
  },
};

/** The plan PostgreSQL picks for a statement, one node per step without costs: `Limit > Sort > Seq Scan on items`. */
async function planOf(pool: Pool, sql: string, values: unknown[]): Promise<string> {
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values);
  return rows
    .map((r) => r['QUERY PLAN'].replace(/\s*\(cost=.*$/, '').replace(/^\s*(->\s*)?/, ''))
    .filter((line) => !/^(Sort Key|Filter|Index Cond):/.test(line))
    .join(' > ');
}

async function report(
  lists: Results,
  creates: Results,
  rows: { created: number; records: number },
  listSql: string,
  plans: { svc: string; indexed: string },
): Promise<string> {
  const list = { svc: meanLoad(lists.svc!), bare: meanLoad(lists.bare!), indexed: meanLoad(lists.indexed!) };
  const create = { svc: creates['svc create']![0]!, bare: creates['bare insert']![0]!, sealed: creates['svc create (personal field)']![0]! };
  const listRatio = list.svc.rps / list.bare.rps;
  const rounds = lists.svc!.map((s, i) => fmtRatio(s.rps / lists.bare![i]!.rps)).join(', ');
  return [
    '## 6. Model CRUD over HTTP (`npm run bench -- models`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `svc runs in a child process (\`bench/serviceProcess.ts\`: \`startService\`, log level ${SERVICE_LOG_LEVEL}, a fresh database, a project ` +
      "with one model `Item`: uuid id, name, description, integer price, created_at, the columns of the peers' baseline `items`). " +
      'The reference is a bare express + `pg` app (`bench/referenceModels.ts`) started in the same process on its own port with its own ' +
      "10-connection `pg.Pool` (the service's size): no auth, no validation, no events. svc requests carry the admin's bearer token. " +
      `autocannon in the parent, ${CONNECTIONS} connections, ${WARM_UP_S} s warm-up then ${DURATION_S} s measured per job, a CHECKPOINT before each.`,
    '',
    `List of 100 records (\`GET /models/item/?limit=100\`) from a table of ${fmtInt(rows.records)} records: ${fmtInt(rows.created)} ` +
      'created by the POST runs below, the rest by one set-based `INSERT ... SELECT FROM generate_series` into the table (rows without ' +
      'events: the list reads only the table), then `VACUUM ANALYZE`. The reference runs the very statement the service sends, taken from `listRecords` at start ' +
      `(\`${listSql}\`, parameters 100, 0) on the same table; the second reference is the peers' baseline query ` +
      '(`SELECT <5 columns> FROM items ORDER BY id LIMIT 100`). Order svc, bare, indexed, bare, svc; svc and bare are the means of their two runs.',
    '',
    markdownTable(LOAD_HEADER, [
      loadRow('svc `GET /models/item/?limit=100`', list.svc),
      loadRow('reference: bare express + pg, the same SELECT', list.bare),
      loadRow('second reference: bare express + pg, `ORDER BY id LIMIT 100` without the tenant predicate', list.indexed),
    ]),
    '',
    `**Ratio svc / bare (same SELECT): ${fmtRatio(listRatio)}** (per pair: ${rounds}). Target >= ${TARGET_LIST_RATIO}: ` +
      `${listRatio >= TARGET_LIST_RATIO ? 'met' : 'missed'}. Ratio svc / the second reference: ${fmtRatio(list.svc.rps / list.indexed.rps)}. ` +
      `PostgreSQL's plans (\`EXPLAIN\` on this table): the service's statement \`${plans.svc}\`; the second reference ` +
      `\`${plans.indexed}\`.`,
    '',
    'Create (`POST /models/item/`: token check, validation, a `RecordCreated` append with the table as its inline projection in the same ' +
      'transaction, then a read of the record for the answer), one run each; the reference is one autocommit `INSERT ... RETURNING` of ' +
      'the same row into a copy of the table:',
    '',
    markdownTable(LOAD_HEADER, [
      loadRow('svc `POST /models/item/` (201)', create.svc),
      loadRow('reference: bare express + pg `INSERT ... RETURNING` (201)', create.bare),
      loadRow('svc `POST /models/sealeditem/` (201), the same model with `description` marked `personal: true`', create.sealed),
    ]),
    '',
    `**${fmtInt(create.svc.rps)} creates/s**; ratio svc / bare INSERT: ${fmtRatio(create.svc.rps / create.bare.rps)}. ` +
      `With a personal field (a data key made for each record, the value sealed with AES-256-GCM): ${fmtInt(create.sealed.rps)} creates/s, ` +
      `${fmtRatio(create.sealed.rps / create.svc.rps)} of the plain model's.`,
  ].join('\n');
}
