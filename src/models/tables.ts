// Model tables: created and extended additively at start; anything destructive stops boot.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { quoteIdent } from '../projections/tableSql.js';
import type { FieldType, ModelDefinition } from './definition.js';

export const PG_TYPES: Record<FieldType, string> = {
  string: 'text',
  text: 'text',
  integer: 'bigint',
  float: 'double precision',
  boolean: 'boolean',
  uuid: 'uuid',
  date: 'date',
  timestamp: 'timestamp with time zone',
  jsonb: 'jsonb',
  enum: 'text',
};

/** Hidden column: the tenant a record belongs to (null outside multi-tenant deployments). */
export const TENANT_COLUMN = 'svc_tenant';

export interface TablePlan {
  table: string;
  statements: string[];
  problems: string[];
}

/**
 * What to run so the table holds every field of every version that uses it. Columns only ever get
 * added; a column no version declares any more, or whose type changed, is a destructive change.
 * Each of `foreignKeys` (columns relations look records up by) gets an index unless one leads with it.
 */
export async function planModelTable(db: Queryable, table: string, versions: ModelDefinition[], foreignKeys: readonly string[] = []): Promise<TablePlan> {
  const wanted = new Map<string, string>();
  const problems: string[] = [];
  for (const model of versions) {
    for (const field of model.fields) {
      const type = PG_TYPES[field.type];
      const other = wanted.get(field.name);
      if (other && other !== type) problems.push(`${table}.${field.name} is ${other} in one version and ${type} in another`);
      wanted.set(field.name, type);
    }
  }
  const primaryKey = versions[0]!.primaryKey.name;
  const { rows } = await db.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
     FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relname = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [table],
  );
  if (rows.length === 0) {
    const columns = [...wanted].map(([name, type]) => `${quoteIdent(name)} ${type}${name === primaryKey ? ' PRIMARY KEY' : ''}`);
    columns.push(`${quoteIdent(TENANT_COLUMN)} text`);
    const indexes = [
      createIndex(table, [TENANT_COLUMN, primaryKey]),
      ...[...new Set(foreignKeys)].filter((c) => wanted.has(c) && c !== primaryKey).map((c) => createIndex(table, [c])),
    ];
    return { table, problems, statements: [`CREATE TABLE ${quoteIdent(table)} (${columns.join(', ')})`, ...indexes] };
  }
  const existing = new Map(rows.map((r) => [r.name, r.type]));
  const statements: string[] = [];
  for (const [name, type] of wanted) {
    const current = existing.get(name);
    if (current === undefined) statements.push(`ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(name)} ${type}`);
    else if (current !== type) problems.push(`${table}.${name} is ${current} in the database but ${type} in the model: changing a type is destructive`);
  }
  for (const name of existing.keys()) {
    if (!wanted.has(name) && name !== TENANT_COLUMN) {
      problems.push(`${table}.${name} exists in the database but no model version declares it: removing a field is destructive`);
    }
  }
  if (!existing.has(TENANT_COLUMN)) statements.push(`ALTER TABLE ${quoteIdent(table)} ADD COLUMN ${quoteIdent(TENANT_COLUMN)} text`);
  const indexed = await leadingIndexColumns(db, table);
  // Every read is one tenant's rows in key order: (tenant, key) serves the filter and the order together.
  if (!indexed.has(TENANT_COLUMN)) statements.push(createIndex(table, [TENANT_COLUMN, primaryKey]));
  for (const column of new Set(foreignKeys)) {
    if (wanted.has(column) && !indexed.has(column)) statements.push(createIndex(table, [column]));
  }
  return { table, problems, statements };
}

/** Columns that lead some index of the table, whatever its name (a rebuild's copied indexes get new names). */
async function leadingIndexColumns(db: Queryable, table: string): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT a.attname AS name
     FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
     WHERE n.nspname = 'public' AND c.relname = $1`,
    [table],
  );
  return new Set(rows.map((r) => r.name));
}

function createIndex(table: string, columns: string[]): string {
  // Identifiers stop at 63 bytes: a long name keeps a hash so two indexes never share a truncated name.
  const plain = `${table}_${columns.join('_')}_idx`;
  const name =
    plain.length <= 63
      ? plain
      : `${plain.slice(0, 50)}_${createHash('sha256')
          .update(`${table}.${columns.join('.')}`)
          .digest('hex')
          .slice(0, 8)}_idx`;
  return `CREATE INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')})`;
}
