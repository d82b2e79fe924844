// Bringing models up at start: parse documents, plan and apply additive table changes, one projection per table.
import type { Pool } from '../db/pool.js';
import type { ProjectDocument } from '../project/documents.js';
import type { RowProjection } from '../projections/types.js';
import { parseModelDefinition, type ModelDefinition, type RelationDefinition } from './definition.js';
import { recordProjection } from './records.js';
import { personalFieldsOf } from './definition.js';
import { planModelTable } from './tables.js';

export class ModelBootError extends Error {
  constructor(readonly problems: string[]) {
    super(`Model definitions are invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ModelBootError';
  }
}

export function parseModels(documents: ProjectDocument[]): { models: ModelDefinition[]; problems: string[] } {
  const models: ModelDefinition[] = [];
  const problems: string[] = [];
  for (const document of documents.filter((d) => d.kind === 'ModelDefinition')) {
    const parsed = parseModelDefinition(document);
    problems.push(...parsed.problems.map((p) => `${document.file} (${document.name} ${document.version}): ${p}`));
    if (!parsed.model) continue;
    if (models.some((m) => m.name === parsed.model!.name && m.version === parsed.model!.version)) {
      problems.push(`${document.file}: ${document.name} ${document.version} is defined twice`);
      continue;
    }
    models.push(parsed.model);
  }
  for (const [table, versions] of groupByTable(models)) {
    const owners = new Set(versions.map((m) => m.name));
    if (owners.size > 1) problems.push(`table ${table} is claimed by several models: ${[...owners].join(', ')}`);
    const keys = new Set(versions.map((m) => m.primaryKey.name));
    if (keys.size > 1) problems.push(`table ${table}: versions disagree on the primary key`);
  }
  for (const [slug, versions] of groupBy(models, (m) => m.slug)) {
    const names = new Set(versions.map((m) => m.name));
    if (names.size > 1) problems.push(`model names ${[...names].join(', ')} differ only in case: they would share /models/${slug}/ and its scopes`);
  }
  for (const model of models) {
    for (const relation of model.relations) problems.push(...relationProblems(model, relation, models));
  }
  return { models, problems };
}

/** The related model must exist; a one_to_many key is a uuid field of it (many_to_one keys are checked with their own model). */
function relationProblems(model: ModelDefinition, relation: RelationDefinition, models: ModelDefinition[]): string[] {
  const related = models.filter((m) => m.name === relation.model);
  const prefix = `${model.file}: relation ${relation.name}`;
  if (related.length === 0) return [`${prefix} names unknown model ${relation.model}`];
  if (relation.type !== 'one_to_many') return [];
  const keys = related.flatMap((m) => m.fields.filter((f) => f.name === relation.foreignKey));
  if (keys.length === 0) return [`${prefix}: foreign_key ${relation.foreignKey} is not a field of ${relation.model}`];
  if (keys.some((f) => f.type !== 'uuid')) return [`${prefix}: foreign_key ${relation.foreignKey} of ${relation.model} must be of type uuid`];
  return [];
}

/** Per table, the columns relations look records up by: many_to_one keys on their own table, one_to_many keys on the related one. */
function foreignKeysByTable(models: ModelDefinition[]): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  const add = (table: string, column: string) => keys.set(table, [...(keys.get(table) ?? []), column]);
  for (const model of models) {
    for (const relation of model.relations) {
      if (relation.type === 'many_to_one') add(model.tablename, relation.foreignKey);
      else for (const related of models.filter((m) => m.name === relation.model)) add(related.tablename, relation.foreignKey);
    }
  }
  return keys;
}

/** Creates or extends every model table; refuses (throws) anything destructive, touching nothing. */
export async function prepareModelTables(pool: Pool, models: ModelDefinition[]): Promise<void> {
  const client = await pool.connect();
  try {
    // Two workers starting together must not race on DDL.
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('svc.model-tables'))");
    const plans = [];
    const foreignKeys = foreignKeysByTable(models);
    for (const [table, versions] of groupByTable(models)) plans.push(await planModelTable(client, table, versions, foreignKeys.get(table)));
    const problems = plans.flatMap((p) => p.problems);
    if (problems.length > 0) throw new ModelBootError(problems);
    for (const statement of plans.flatMap((p) => p.statements)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

export function modelProjections(models: ModelDefinition[]): RowProjection[] {
  return [...groupByTable(models)].map(([table, versions]) =>
    recordProjection(table, versions[0]!.primaryKey.name, [...new Set(versions.flatMap(personalFieldsOf))]),
  );
}

function groupByTable(models: ModelDefinition[]): Map<string, ModelDefinition[]> {
  return groupBy(models, (m) => m.tablename);
}

function groupBy(models: ModelDefinition[], keyOf: (model: ModelDefinition) => string): Map<string, ModelDefinition[]> {
  const groups = new Map<string, ModelDefinition[]>();
  for (const model of models) groups.set(keyOf(model), [...(groups.get(keyOf(model)) ?? []), model]);
  return groups;
}
