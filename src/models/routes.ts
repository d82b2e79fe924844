// Opt-in CRUD under /models/{model}/: only the operations a model lists, behind its scopes and groups.
import { Router, type Request } from 'express';
import type { Pool } from '../db/pool.js';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import type { Reads } from '../http/reads.js';
import type { Clock } from '../kernel/clock.js';
import { NotFoundError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator, integerParam } from '../kernel/validation.js';
import { crudAccess } from './crudAccess.js';
import type { ModelDefinition } from './definition.js';
import { findRecord, includeRelations, listRecords } from './queries.js';
import type { RecordCommands } from './records.js';
import type { ModelRegistry } from './registry.js';
import { compileModelValidators, type ModelValidators } from './schemas.js';

const listQuery = compileValidator<{ limit?: string; offset?: string; include?: string; filter?: Record<string, string> }>(
  {
    type: 'object',
    properties: {
      limit: {},
      offset: {},
      include: { type: 'string', maxLength: 500 },
      filter: { type: 'object', additionalProperties: { type: 'string', maxLength: 1000 } },
    },
    additionalProperties: false,
  },
  'query',
);
const readQuery = compileValidator<{ include?: string }>(
  { type: 'object', properties: { include: { type: 'string', maxLength: 500 } }, additionalProperties: false },
  'query',
);

export interface ModelCrudDeps {
  pool: Pool;
  /** Lists and reads go here (a read replica when one is set); writes and their answers use the primary. */
  reads: Reads;
  registry: ModelRegistry;
  records: RecordCommands;
  authenticator: Authenticator;
  clock: Clock;
}

export function modelCrudRouter(deps: ModelCrudDeps): Router {
  const { pool, records, clock } = deps;
  const router = Router();
  const { authorize, relationsFor } = crudAccess(deps.registry, deps.authenticator);
  const validators = new WeakMap<ModelDefinition, ModelValidators>();
  const validatorsOf = (model: ModelDefinition) => {
    let compiled = validators.get(model);
    if (!compiled) validators.set(model, (compiled = compileModelValidators(model)));
    return compiled;
  };
  const tenantOf = (req: Request) => req.principal?.tenant ?? null;
  const openOne = async (model: ModelDefinition, record: JsonObject | undefined) => (record ? (await records.open(model, [record]))[0] : record);
  const context = (req: Request) => ({ tenant: tenantOf(req), at: clock.now().toISOString(), metadata: requestMetadata(req) });

  router.get('/models/:model', async (req, res) => {
    const model = await authorize(req, 'list');
    const query = listQuery.parse(req.query);
    const page = { limit: integerParam(query.limit, 'limit', 100, 1, 1000), offset: integerParam(query.offset, 'offset', 0, 0, 1_000_000_000) };
    const { value: rows, db } = await deps.reads.read(req, (db) => listRecords(db, model, { ...page, filters: query.filter ?? {} }, tenantOf(req)));
    await includeRelations(db, model, rows, await relationsFor(req, model, query.include), tenantOf(req));
    res.json(await records.open(model, rows));
  });

  router.post('/models/:model', async (req, res) => {
    const model = await authorize(req, 'create');
    const values = validatorsOf(model).create.parse(req.body ?? {}) as JsonObject;
    const id = await records.create(model, values, context(req));
    res.status(201).json(await openOne(model, await findRecord(pool, model, id, tenantOf(req))));
  });

  router.get('/models/:model/:id', async (req, res) => {
    const model = await authorize(req, 'read');
    const query = readQuery.parse(req.query);
    const { value: record, db } = await deps.reads.read(req, (db) => findRecord(db, model, String(req.params.id), tenantOf(req)));
    if (!record) throw new NotFoundError(`${model.name} ${req.params.id} not found`);
    await includeRelations(db, model, [record], await relationsFor(req, model, query.include), tenantOf(req));
    res.json(await openOne(model, record));
  });

  router.patch('/models/:model/:id', async (req, res) => {
    const model = await authorize(req, 'update');
    const changes = validatorsOf(model).update.parse(req.body ?? {}) as JsonObject;
    const id = String(req.params.id);
    if (!(await findRecord(pool, model, id, tenantOf(req)))) throw new NotFoundError(`${model.name} ${id} not found`);
    if (Object.keys(changes).length > 0) await records.update(model, id, changes, context(req));
    res.json(await openOne(model, await findRecord(pool, model, id, tenantOf(req))));
  });

  router.delete('/models/:model/:id', async (req, res) => {
    const model = await authorize(req, 'delete');
    const id = String(req.params.id);
    if (!(await findRecord(pool, model, id, tenantOf(req)))) throw new NotFoundError(`${model.name} ${id} not found`);
    await records.delete(model, id, context(req));
    res.status(204).end();
  });

  return router;
}
