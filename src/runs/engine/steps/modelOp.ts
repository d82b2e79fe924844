// ModelOp: a record operation on a context model; writes commit with the step's journal entry.
import { isAppError, ValidationError } from '../../../kernel/errors.js';
import { isUuid } from '../../../kernel/ids.js';
import type { JsonObject, JsonValue } from '../../../kernel/json.js';
import { findRecord, includeRelations, listRecords, type ResolvedRelation } from '../../../models/queries.js';
import { compileModelValidators } from '../../../models/schemas.js';
import type { ModelDefinition } from '../../../models/definition.js';
import { render } from '../../../workflows/template.js';
import { errorOutcome, type StepExecutor, type StepOutcome } from './types.js';

const validators = new WeakMap<ModelDefinition, ReturnType<typeof compileModelValidators>>();
const validatorsOf = (model: ModelDefinition) => {
  let compiled = validators.get(model);
  if (!compiled) validators.set(model, (compiled = compileModelValidators(model)));
  return compiled;
};

export const executeModelOp: StepExecutor = async ({ step, context, principal, at }, deps, tx) => {
  const model = deps.models.active(String(step.config.model));
  if (!model) return errorOutcome(`model ${String(step.config.model)} is not enabled`, { step: step.id });
  const operation = String(step.config.operation);
  const output = typeof step.config.output === 'string' ? step.config.output : model.slug;
  const db = tx?.client ?? deps.pool;
  const tenant = principal?.tenant ?? null;
  const recordContext = { tenant, at, metadata: { actor: principal?.user_id ?? 'system', step: step.id } };
  // The rendered payload is journaled: a replay compares what the step would write, not generated ids.
  const payload = ['create', 'update'].includes(operation) ? render(step.config.payload ?? {}, context) : null;
  const done = (value: JsonValue, record?: string): StepOutcome => ({
    signal: 'default',
    changes: { set: { [output]: value }, unset: [] },
    journal: { model: model.name, operation, ...(record ? { record_id: record } : {}), ...(payload !== null ? { payload } : {}) },
  });
  const recordId = () => {
    const id = render(step.config.record_id ?? null, context);
    return typeof id === 'string' && isUuid(id) ? id : undefined;
  };
  try {
    switch (operation) {
      case 'create': {
        const values = validatorsOf(model).create.parse(payload) as JsonObject;
        const id = await deps.records.create(model, values, recordContext, tx);
        return done((await findRecord(db, model, id, tenant)) ?? null, id);
      }
      case 'read': {
        const id = recordId();
        const record = id ? await findRecord(db, model, id, tenant) : undefined;
        if (!record) return { signal: 'not_found', changes: { set: { [output]: null }, unset: [] } };
        await includeRelations(db, model, [record], relations(deps, model, step.config.include), tenant);
        return done(record, id);
      }
      case 'list': {
        const filters = Object.fromEntries(
          Object.entries(render(step.config.filters ?? {}, context) as JsonObject).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
        );
        const limit = Math.min(1000, Math.max(1, Number(step.config.limit ?? 100)));
        const rows = await listRecords(db, model, { limit, offset: 0, filters }, tenant);
        await includeRelations(db, model, rows, relations(deps, model, step.config.include), tenant);
        return done(rows);
      }
      case 'update': {
        const id = recordId();
        if (!id || !(await findRecord(db, model, id, tenant))) return { signal: 'not_found', changes: { set: { [output]: null }, unset: [] } };
        const changes = validatorsOf(model).update.parse(payload) as JsonObject;
        if (Object.keys(changes).length > 0) await deps.records.update(model, id, changes, recordContext, tx);
        return done((await findRecord(db, model, id, tenant)) ?? null, id);
      }
      case 'delete': {
        const id = recordId();
        if (!id || !(await findRecord(db, model, id, tenant))) return { signal: 'not_found', changes: { set: { [output]: null }, unset: [] } };
        await deps.records.delete(model, id, recordContext, tx);
        return done({ id, deleted: true }, id);
      }
      default:
        return errorOutcome(`unknown ModelOp operation ${operation}`, { step: step.id });
    }
  } catch (error) {
    if (error instanceof ValidationError) return errorOutcome('payload is invalid', { step: step.id, detail: error.issues as unknown as JsonValue });
    if (isAppError(error) && error.code !== 'CONFLICT') return errorOutcome(error.message, { step: step.id });
    throw error;
  }
};

function relations(deps: Parameters<StepExecutor>[1], model: ModelDefinition, include: unknown): ResolvedRelation[] {
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
