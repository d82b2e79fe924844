// Writing read-model rows: the per-column text arrays (unnest) store exactly what
// jsonb_populate_recordset stores for the same rows, and rows outside their rules still go in.
import { expect } from 'chai';
import pg from 'pg';
import { insertRows, readTableShape, upsertRows, type TableShape } from '../../src/projections/tableSql.js';
import type { Row } from '../../src/projections/types.js';
import type { Queryable } from '../../src/db/pool.js';
import { createTestDatabase } from '../support/db.js';

const COLUMNS = `id text PRIMARY KEY, label varchar(40), n integer, big bigint, amount numeric, ok boolean,
  at timestamptz, day date, doc jsonb, raw json, tags text[]`;

const ROWS: Row[] = [
  {
    id: 'a',
    label: 'tab\there "quoted" \\ back\nslash',
    n: -7,
    big: 9007199254740991,
    amount: 12,
    ok: true,
    at: '2026-11-26T12:00:00.123456Z',
    day: '2026-11-26',
    doc: { z: 1, a: [1, 'two', null, { nested: '\u00e9\u{1f600}' }], 'k"ey': -0, big: 1e21, f: 0.1 },
  },
  { id: 'b', label: '', n: 0, ok: false, doc: 'just a string', at: null },
  { id: 'c', doc: [[], {}], amount: '3.14159265358979323846', n: '42', ok: 'true' },
  { id: 'd', doc: null, extra: 'ignored' },
];

describe('projection table writes', () => {
  let pool: pg.Pool;

  before(async () => {
    pool = new pg.Pool({ connectionString: await createTestDatabase(), max: 2 });
    await pool.query(`CREATE TABLE fast (${COLUMNS}); CREATE TABLE reference (${COLUMNS})`);
  });
  after(async () => {
    await pool?.end();
  });

  /** The pool, noting each statement's text: which way the rows went. */
  const statements: string[] = [];
  const noting = {
    query: (text: string, values?: unknown[]) => {
      statements.push(text);
      return pool.query(text, values);
    },
  } as unknown as Queryable;
  const shapeOf = (table: string): Promise<TableShape> => readTableShape(pool, 'public', table, ['id']);
  const contents = async (table: string) => (await pool.query(`SELECT to_jsonb(t)::text AS row FROM ${table} t ORDER BY id`)).rows.map((r) => r.row as string);
  /** What jsonb_populate_recordset stores: the way rows were written before the text arrays. */
  const populate = (table: string, rows: Row[]) =>
    pool.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)`, [JSON.stringify(rows)]);

  it('stores what jsonb_populate_recordset stores, for every kind of value the text arrays take', async () => {
    const shape = { ...(await shapeOf('fast')) };
    // Without the json and array columns every row above qualifies for the text arrays.
    shape.columns = shape.columns.filter((c) => c.name !== 'raw' && c.name !== 'tags');
    await insertRows(noting, shape, ROWS);
    expect(statements.splice(0))
      .to.have.length(1)
      .and.satisfy((texts: string[]) => texts[0]!.includes('FROM unnest('));
    await populate('reference', ROWS);
    expect(await contents('fast')).to.deep.equal(await contents('reference'));
    await upsertRows(pool, shape, [
      { id: 'a', n: 1, doc: { again: true } },
      { id: 'e', label: 'new' },
    ]);
    await pool.query(`DELETE FROM reference WHERE id = 'a'`);
    await populate('reference', [
      { id: 'a', n: 1, doc: { again: true } },
      { id: 'e', label: 'new' },
    ]);
    expect(await contents('fast')).to.deep.equal(await contents('reference'));
  });

  it('writes rows outside those rules (a json or array column, a number in a text column, a fraction) as before', async () => {
    await pool.query('TRUNCATE fast; TRUNCATE reference');
    const shape = await shapeOf('fast');
    const rows: Row[] = [
      { id: 'x', raw: { b: 1, a: [1, 2] }, tags: ['one', 'two "2"'] },
      { id: 'y', label: 5, amount: 0.1 },
    ];
    await insertRows(noting, shape, rows);
    expect(statements.splice(0)[0]).to.include('jsonb_populate_recordset');
    await populate('reference', rows);
    expect(await contents('fast')).to.deep.equal(await contents('reference'));
    const text = await pool.query(`SELECT raw::text AS raw, label FROM fast ORDER BY id`);
    expect(text.rows.map((r) => [r.raw, r.label])).to.deep.equal([
      ['{"a": [1, 2], "b": 1}', null],
      [null, '5'],
    ]);
  });
});
