// planModelTable against a real database: create, additive columns, destructive changes refused.
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { parseModelDefinition, type ModelDefinition } from '../../src/models/definition.js';
import { planModelTable } from '../../src/models/tables.js';
import { createTestDatabase } from '../support/db.js';

function gadget(fields: Record<string, unknown>[], version = 'v1'): ModelDefinition {
  const parsed = parseModelDefinition({
    kind: 'ModelDefinition',
    name: 'Gadget',
    version,
    file: 'models/gadget.yaml',
    body: { kind: 'ModelDefinition', metadata: { name: 'Gadget', schema_version: version }, spec: { tablename: 'gadgets', fields } },
  });
  expect(parsed.problems).to.deep.equal([]);
  return parsed.model!;
}

const ID = { name: 'id', type: 'uuid', primary_key: true };
const base = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'integer' }]);

async function columnsOf(pool: Pool): Promise<Record<string, string>> {
  const { rows } = await pool.query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = 'gadgets' ORDER BY ordinal_position`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.type]));
}

async function apply(pool: Pool, statements: string[]): Promise<void> {
  for (const statement of statements) await pool.query(statement);
}

describe('planModelTable', () => {
  let pool: Pool;
  before(async () => {
    pool = createPool({ connectionString: await createTestDatabase(), max: 2 });
    const plan = await planModelTable(pool, 'gadgets', [base]);
    expect(plan.problems).to.deep.equal([]);
    expect(plan.statements).to.have.length(2);
    expect(plan.statements[0]).to.match(/^CREATE TABLE "gadgets"/);
    // Every read is one tenant's rows in key order.
    expect(plan.statements[1]).to.equal('CREATE INDEX IF NOT EXISTS "gadgets_svc_tenant_id_idx" ON "gadgets" ("svc_tenant", "id")');
    await apply(pool, plan.statements);
    await pool.query(`INSERT INTO gadgets (id, label, weight) VALUES ('00000000-0000-4000-8000-000000000001', 'kept', 7)`);
  });
  after(async () => {
    await pool?.end();
  });

  it('creates the table with a uuid primary key, typed columns and the hidden tenant column', async () => {
    expect(await columnsOf(pool)).to.deep.equal({ id: 'uuid', label: 'text', weight: 'bigint', svc_tenant: 'text' });
    const { rows } = await pool.query(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = 'gadgets'::regclass AND i.indisprimary`,
    );
    expect(rows.map((r) => r.attname)).to.deep.equal(['id']);
  });

  it('plans nothing when the table already matches', async () => {
    expect(await planModelTable(pool, 'gadgets', [base])).to.deep.equal({ table: 'gadgets', statements: [], problems: [] });
  });

  it('adds a new field as a column (additive only) and keeps the rows', async () => {
    const wider = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'integer' }, { name: 'bought', type: 'date' }]);
    const plan = await planModelTable(pool, 'gadgets', [wider]);
    expect(plan.problems).to.deep.equal([]);
    expect(plan.statements).to.deep.equal(['ALTER TABLE "gadgets" ADD COLUMN "bought" date']);
    await apply(pool, plan.statements);
    expect((await columnsOf(pool)).bought).to.equal('date');
    const { rows } = await pool.query('SELECT label, weight, bought FROM gadgets');
    expect(rows).to.deep.equal([{ label: 'kept', weight: 7, bought: null }]);
  });

  it('reports a field no version declares any more as destructive, with table and column', async () => {
    const narrower = gadget([ID, { name: 'label', type: 'string' }, { name: 'bought', type: 'date' }]);
    const plan = await planModelTable(pool, 'gadgets', [narrower]);
    expect(plan.problems).to.have.length(1);
    expect(plan.problems[0]).to.include('gadgets.weight').and.to.include('removing a field is destructive');
  });

  it('keeps a column that an older version still declares (versions share the table)', async () => {
    const v1 = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'integer' }, { name: 'bought', type: 'date' }]);
    const v2 = gadget([ID, { name: 'label', type: 'string' }, { name: 'bought', type: 'date' }], 'v2');
    expect((await planModelTable(pool, 'gadgets', [v1, v2])).problems).to.deep.equal([]);
  });

  it('reports a changed type as destructive, against the database and between versions', async () => {
    const retyped = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'float' }, { name: 'bought', type: 'date' }]);
    const plan = await planModelTable(pool, 'gadgets', [retyped]);
    expect(plan.problems.join('\n')).to.include('gadgets.weight is bigint in the database but double precision in the model');
    const v1 = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'integer' }, { name: 'bought', type: 'date' }]);
    const v2 = gadget([ID, { name: 'label', type: 'string' }, { name: 'weight', type: 'string' }, { name: 'bought', type: 'date' }], 'v2');
    expect((await planModelTable(pool, 'gadgets', [v1, v2])).problems.join('\n')).to.include('gadgets.weight is bigint in one version and text in another');
  });

  it('maps every field type to its column type', async () => {
    const all = gadget([
      ID,
      ...['string', 'text', 'integer', 'float', 'boolean', 'uuid', 'date', 'timestamp', 'jsonb'].map((type) => ({ name: `f_${type}`, type })),
      { name: 'f_enum', type: 'enum', enum_values: ['a'] },
    ]);
    const fresh = createPool({ connectionString: await createTestDatabase(), max: 1 });
    try {
      await apply(fresh, (await planModelTable(fresh, 'gadgets', [all])).statements);
      expect(await columnsOf(fresh)).to.deep.equal({
        id: 'uuid',
        f_string: 'text',
        f_text: 'text',
        f_integer: 'bigint',
        f_float: 'double precision',
        f_boolean: 'boolean',
        f_uuid: 'uuid',
        f_date: 'date',
        f_timestamp: 'timestamp with time zone',
        f_jsonb: 'jsonb',
        f_enum: 'text',
        svc_tenant: 'text',
      });
    } finally {
      await fresh.end();
    }
  });

  it('indexes foreign-key columns: with a new table, on an existing one, and never twice (whatever the index is called)', async () => {
    const owned = gadget([ID, { name: 'label', type: 'string' }, { name: 'owner_id', type: 'uuid' }, { name: 'maker_id', type: 'uuid' }]);
    const fresh = createPool({ connectionString: await createTestDatabase(), max: 1 });
    const leading = async () =>
      (
        await fresh.query<{ name: string }>(
          `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
           WHERE i.indrelid = 'gadgets'::regclass ORDER BY 1`,
        )
      ).rows.map((r) => r.name);
    try {
      const created = await planModelTable(fresh, 'gadgets', [owned], ['owner_id', 'owner_id', 'id', 'not_a_column']);
      expect(created.statements.slice(2)).to.deep.equal(['CREATE INDEX IF NOT EXISTS "gadgets_owner_id_idx" ON "gadgets" ("owner_id")']);
      await apply(fresh, created.statements);
      expect(await leading()).to.deep.equal(['id', 'owner_id', 'svc_tenant']);
      expect((await planModelTable(fresh, 'gadgets', [owned], ['owner_id'])).statements).to.deep.equal([]);

      // An existing table gains the index; one under another name (a rebuild copies indexes under new names) counts.
      await fresh.query('DROP INDEX gadgets_owner_id_idx');
      await fresh.query('CREATE INDEX renamed_by_rebuild ON gadgets (maker_id, label)');
      const extended = await planModelTable(fresh, 'gadgets', [owned], ['owner_id', 'maker_id']);
      expect(extended).to.deep.equal({
        table: 'gadgets',
        problems: [],
        statements: ['CREATE INDEX IF NOT EXISTS "gadgets_owner_id_idx" ON "gadgets" ("owner_id")'],
      });
      await apply(fresh, extended.statements);
      expect(await leading()).to.deep.equal(['id', 'maker_id', 'owner_id', 'svc_tenant']);
    } finally {
      await fresh.end();
    }
  });
});
