// Reading model records: filtered, paged lists and single records, with relations loaded in batch.
import type { Queryable } from '../db/pool.js';
import { BadRequestError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import type { JsonObject } from '../kernel/json.js';
import { quoteIdent } from '../projections/tableSql.js';
import type { FieldDefinition, ModelDefinition, RelationDefinition } from './definition.js';
import { TENANT_COLUMN } from './tables.js';

export interface ListQuery {
  limit: number;
  offset: number;
  /** field -> raw value from `filter[field]=value`. */
  filters: Record<string, string>;
}

function selectList(model: ModelDefinition): string {
  return model.fields.map((f) => quoteIdent(f.name)).join(', ');
}

// PostgreSQL refuses UTC offsets of 16 hours or more.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-](0\d|1[0-5])(:?\d{2})?)?$/i;

/** YYYY-MM-DD naming a day that exists (no 2024-02-30, and no year 0, which PostgreSQL lacks). */
function isCalendarDate(raw: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || raw.startsWith('0000')) return false;
  const parsed = new Date(`${raw}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === raw;
}

/** Converts a filter's text to the field's type; a value that cannot be one is a 400, never SQL. */
export function filterValue(field: FieldDefinition, raw: string): string | number | boolean {
  const fail = () => new BadRequestError(`filter[${field.name}]: "${raw}" is not a valid ${field.type}`);
  // PostgreSQL text cannot hold U+0000: refused here rather than by the database.
  if (raw.includes('\u0000')) throw new BadRequestError(`filter[${field.name}]: a value may not contain the NUL character`);
  switch (field.type) {
    case 'integer':
      if (!/^-?\d{1,18}$/.test(raw)) throw fail();
      return Number(raw);
    case 'float': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value)) throw fail();
      return value;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw fail();
      return raw === 'true';
    case 'uuid':
      if (!isUuid(raw)) throw fail();
      return raw;
    case 'date':
      if (!isCalendarDate(raw)) throw fail();
      return raw;
    case 'timestamp':
      // Date.parse alone takes '1' or '2024-02-30', which PostgreSQL refuses (a 500): ISO 8601 with a real day only.
      if (!ISO_TIMESTAMP.test(raw) || Number.isNaN(Date.parse(raw)) || !isCalendarDate(raw.slice(0, 10))) throw fail();
      return raw;
    case 'enum':
      if (!field.enumValues?.includes(raw)) throw fail();
      return raw;
    default:
      return raw;
  }
}

/**
 * The tenant condition, written so the planner can estimate it and use the (tenant, key) index:
 * `IS NOT DISTINCT FROM $n` it can do neither, and it sorted the whole table for every page.
 */
function tenantIs(tenant: string | null, params: unknown[]): string {
  if (tenant === null) return `${quoteIdent(TENANT_COLUMN)} IS NULL`;
  params.push(tenant);
  return `${quoteIdent(TENANT_COLUMN)} = $${params.length}`;
}

/** One tenant's records in key order; the tenant leads the ORDER BY (a constant here) so the index gives the order. */
export async function listRecords(db: Queryable, model: ModelDefinition, query: ListQuery, tenant: string | null): Promise<JsonObject[]> {
  const params: unknown[] = [];
  const where = [tenantIs(tenant, params)];
  for (const [name, raw] of Object.entries(query.filters)) {
    const field = model.fields.find((f) => f.name === name);
    if (!field) throw new BadRequestError(`filter[${name}]: ${model.name} has no field ${name}`);
    if (!field.filterable) throw new BadRequestError(`filter[${name}]: ${name} cannot be filtered on`);
    params.push(filterValue(field, raw));
    where.push(`${quoteIdent(name)} = $${params.length}`);
  }
  params.push(query.limit, query.offset);
  const { rows } = await db.query<JsonObject>(
    `SELECT ${selectList(model)} FROM ${quoteIdent(model.tablename)} WHERE ${where.join(' AND ')}
     ORDER BY ${quoteIdent(TENANT_COLUMN)}, ${quoteIdent(model.primaryKey.name)} LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return rows;
}

export async function findRecord(db: Queryable, model: ModelDefinition, id: string, tenant: string | null): Promise<JsonObject | undefined> {
  if (!isUuid(id)) return undefined;
  const params: unknown[] = [id];
  const { rows } = await db.query<JsonObject>(
    `SELECT ${selectList(model)} FROM ${quoteIdent(model.tablename)}
     WHERE ${quoteIdent(model.primaryKey.name)} = $1 AND ${tenantIs(tenant, params)}`,
    params,
  );
  return rows[0];
}

export interface ResolvedRelation {
  relation: RelationDefinition;
  target: ModelDefinition;
}

/**
 * Embeds each relation under its name with one query per relation, whatever the number of
 * records: many_to_one as an object (or null), one_to_many as an array. Keys on both sides are
 * uuid columns (checked at boot), compared as uuids so the key's index serves the lookup.
 */
export async function includeRelations(
  db: Queryable,
  model: ModelDefinition,
  records: JsonObject[],
  relations: ResolvedRelation[],
  tenant: string | null,
): Promise<void> {
  if (records.length === 0) return;
  for (const { relation, target } of relations) {
    const manyToOne = relation.type === 'many_to_one';
    const localKey = manyToOne ? relation.foreignKey : model.primaryKey.name;
    const remoteKey = manyToOne ? target.primaryKey.name : relation.foreignKey;
    const ids = [...new Set(records.map((r) => r[localKey]).filter((v): v is string => typeof v === 'string'))];
    const params: unknown[] = [ids];
    const { rows } = ids.length
      ? await db.query<JsonObject>(
          `SELECT ${selectList(target)} FROM ${quoteIdent(target.tablename)}
           WHERE ${quoteIdent(remoteKey)} = ANY($1::uuid[]) AND ${tenantIs(tenant, params)}
           ORDER BY ${quoteIdent(target.primaryKey.name)}`,
          params,
        )
      : { rows: [] as JsonObject[] };
    const byKey = new Map<unknown, JsonObject[]>();
    for (const row of rows) byKey.set(row[remoteKey], [...(byKey.get(row[remoteKey]) ?? []), row]);
    for (const record of records) {
      const matches = record[localKey] === null ? [] : (byKey.get(record[localKey]) ?? []);
      record[relation.name] = manyToOne ? (matches[0] ?? null) : matches;
    }
  }
}
