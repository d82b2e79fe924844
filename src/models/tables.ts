// Model tables: created and extended additively at start; anything destructive stops boot.
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
 */
export async function planModelTable(db: Queryable, table: string, versions: ModelDefinition[]): Promise<TablePlan> {
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
    return { table, problems, statements: [`CREATE TABLE ${quoteIdent(table)} (${columns.join(', ')})`] };
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
  return { table, problems, statements };
}
