// Bringing models up at start: parse documents, plan and apply additive table changes, one projection per table.
import type { Pool } from '../db/pool.js';
import type { ProjectDocument } from '../project/documents.js';
import type { RowProjection } from '../projections/types.js';
import { parseModelDefinition, type ModelDefinition } from './definition.js';
import { recordProjection } from './records.js';
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
  for (const model of models) {
    for (const relation of model.relations) {
      if (!models.some((m) => m.name === relation.model)) problems.push(`${model.file}: relation ${relation.name} names unknown model ${relation.model}`);
    }
  }
  return { models, problems };
}

/** Creates or extends every model table; refuses (throws) anything destructive, touching nothing. */
export async function prepareModelTables(pool: Pool, models: ModelDefinition[]): Promise<void> {
  const client = await pool.connect();
  try {
    // Two workers starting together must not race on DDL.
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('svc.model-tables'))");
    const plans = [];
    for (const [table, versions] of groupByTable(models)) plans.push(await planModelTable(client, table, versions));
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
  return [...groupByTable(models)].map(([table, versions]) => recordProjection(table, versions[0]!.primaryKey.name));
}

function groupByTable(models: ModelDefinition[]): Map<string, ModelDefinition[]> {
  const groups = new Map<string, ModelDefinition[]>();
  for (const model of models) groups.set(model.tablename, [...(groups.get(model.tablename) ?? []), model]);
  return groups;
}
