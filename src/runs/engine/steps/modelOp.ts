// ModelOp: a record operation on a context model; writes commit with the step's events.
import type { Queryable } from '../../../db/pool.js';
import type { EventTransaction } from '../../../eventstore/transaction.js';
import { isAppError, ValidationError } from '../../../kernel/errors.js';
import { isUuid } from '../../../kernel/ids.js';
import type { JsonObject, JsonValue } from '../../../kernel/json.js';
import { findRecord, includeRelations, listRecords, type ResolvedRelation } from '../../../models/queries.js';
import { compileModelValidators } from '../../../models/schemas.js';
import type { ModelDefinition } from '../../../models/definition.js';
import type { RecordContext } from '../../../models/records.js';
import type { StepDefinition } from '../../../workflows/definition.js';
import { render } from '../../../workflows/template.js';
import { errorNameOf, errorOutcome, type StepDeps, type StepExecutor, type StepOutcome } from './types.js';

const validators = new WeakMap<ModelDefinition, ReturnType<typeof compileModelValidators>>();
const validatorsOf = (model: ModelDefinition) => {
  let compiled = validators.get(model);
  if (!compiled) validators.set(model, (compiled = compileModelValidators(model)));
  return compiled;
};

/** What one operation needs: the model, the step, where it reads and writes, and how it answers. */
interface Operation {
  model: ModelDefinition;
  step: StepDefinition;
  context: JsonObject;
  deps: StepDeps;
  tx: EventTransaction | undefined;
  db: Queryable;
  tenant: string | null;
  recordContext: RecordContext;
  /** The rendered payload of a create or update (null for the others). */
  payload: JsonValue;
  output: string;
  done: (value: JsonValue, record?: string) => StepOutcome;
}

export const executeModelOp: StepExecutor = async ({ step, context, principal, at }, deps, tx) => {
  const model = deps.models.active(String(step.config.model));
  if (!model) return errorOutcome(`model ${String(step.config.model)} is not enabled`, { step: step.id });
  const operation = String(step.config.operation);
  const output = typeof step.config.output === 'string' ? step.config.output : model.slug;
  const tenant = principal?.tenant ?? null;
  // The rendered payload is journaled: a replay compares what the step would write, not generated ids.
  const payload = ['create', 'update'].includes(operation) ? render(step.config.payload ?? {}, context) : null;
  const done = (value: JsonValue, record?: string): StepOutcome => ({
    signal: 'default',
    changes: { set: { [output]: value }, unset: [] },
    report: { model: model.name, operation, ...(record ? { record_id: record } : {}), ...(payload !== null ? { payload } : {}) },
  });
  const recordContext = { tenant, at, metadata: { step: step.id } };
  const op: Operation = { model, step, context, deps, tx, db: tx?.client ?? deps.pool, tenant, recordContext, payload, output, done };
  try {
    return await operate(operation, op);
  } catch (error) {
    if (error instanceof ValidationError)
      return errorOutcome('payload is invalid', { step: step.id, name: 'ValidationError', detail: error.issues as unknown as JsonValue });
    if (isAppError(error) && error.code !== 'CONFLICT') return errorOutcome(error.message, { step: step.id, name: errorNameOf(error) });
    throw error;
  }
};

function operate(operation: string, op: Operation): Promise<StepOutcome> {
  switch (operation) {
    case 'create':
      return createRecord(op);
    case 'read':
      return readRecord(op);
    case 'list':
      return listOf(op);
    case 'update':
      return updateRecord(op);
    case 'delete':
      return deleteRecord(op);
    default:
      return Promise.resolve(errorOutcome(`unknown ModelOp operation ${operation}`, { step: op.step.id }));
  }
}

const notFound = (op: Operation): StepOutcome => ({ signal: 'not_found', changes: { set: { [op.output]: null }, unset: [] } });

function recordIdOf(op: Operation): string | undefined {
  const id = render(op.step.config.record_id ?? null, op.context);
  return typeof id === 'string' && isUuid(id) ? id : undefined;
}

async function createRecord(op: Operation): Promise<StepOutcome> {
  const { model, db, tenant } = op;
  const values = validatorsOf(model).create.parse(op.payload) as JsonObject;
  const id = await op.deps.records.create(model, values, op.recordContext, op.tx);
  return op.done((await findRecord(db, model, id, tenant)) ?? null, id);
}

async function readRecord(op: Operation): Promise<StepOutcome> {
  const { model, db, tenant } = op;
  const id = recordIdOf(op);
  const record = id ? await findRecord(db, model, id, tenant) : undefined;
  if (!record) return notFound(op);
  await includeRelations(db, model, [record], relations(op.deps, model, op.step.config.include), tenant);
  return op.done(record, id);
}

async function listOf(op: Operation): Promise<StepOutcome> {
  const { model, db, tenant, step } = op;
  const filters = Object.fromEntries(
    Object.entries(render(step.config.filters ?? {}, op.context) as JsonObject).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  );
  const limit = Math.min(1000, Math.max(1, Number(step.config.limit ?? 100)));
  const rows = await listRecords(db, model, { limit, offset: 0, filters }, tenant);
  await includeRelations(db, model, rows, relations(op.deps, model, step.config.include), tenant);
  return op.done(rows);
}

async function updateRecord(op: Operation): Promise<StepOutcome> {
  const { model, db, tenant } = op;
  const id = recordIdOf(op);
  if (!id || !(await findRecord(db, model, id, tenant))) return notFound(op);
  const changes = validatorsOf(model).update.parse(op.payload) as JsonObject;
  if (Object.keys(changes).length > 0) await op.deps.records.update(model, id, changes, op.recordContext, op.tx);
  return op.done((await findRecord(db, model, id, tenant)) ?? null, id);
}

async function deleteRecord(op: Operation): Promise<StepOutcome> {
  const { model, db, tenant } = op;
  const id = recordIdOf(op);
  if (!id || !(await findRecord(db, model, id, tenant))) return notFound(op);
  await op.deps.records.delete(model, id, op.recordContext, op.tx);
  return op.done({ id, deleted: true }, id);
}

function relations(deps: StepDeps, model: ModelDefinition, include: unknown): ResolvedRelation[] {
  const names = typeof include === 'string' ? include.split(',') : Array.isArray(include) ? include.map(String) : [];
  return names
    .map((name) => name.trim())
    .filter(Boolean)
    .flatMap((name) => {
      const relation = model.relations.find((r) => r.name === name);
      const target = relation ? deps.models.active(relation.model) : undefined;
      return relation && target ? [{ relation, target }] : [];
    });
}
