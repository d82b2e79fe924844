// Paths that follow the project: each enabled workflow's trigger and each opted-in model's CRUD.
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import type { OpenAPIV3_1 } from 'openapi-types';
import type { ModelDefinition } from '../../models/definition.js';
import type { ModelRegistry } from '../../models/registry.js';
import { variantSchema, type Variant } from '../../models/schemas.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { resolveSchema } from '../../workflows/schemas.js';
import { ERRORS, operation, ref, type Operation, type PathItem, type Schema } from '../builders.js';

type Schemas = Record<string, Schema>;

const envelope = (description: string): OpenAPIV3_1.ResponseObject => ({ description, content: { 'application/json': { schema: ref('WorkflowError') } } });

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' } as Schema,
  description:
    'Within SVC_IDEMPOTENCY_TTL_SECONDS, a repeat with the same key (same caller, same workflow) starts nothing and answers as the first request did, with `Idempotent-Replayed: true` and the same `X-Svc-Run-Id`; the same key with another body is 422 `IDEMPOTENCY_KEY_REUSED`.',
};

/** A trigger's 422: the input does not match (ValidationError), or the Idempotency-Key came with another body (Error). */
const TRIGGER_422: OpenAPIV3_1.ResponseObject = {
  description: 'Request validation failed (ValidationError), or this Idempotency-Key was used with another request body (Error, code `IDEMPOTENCY_KEY_REUSED`)',
  content: { 'application/json': { schema: { anyOf: [ref('ValidationError'), ref('Error')] } } },
};

function triggerOperation(workflow: WorkflowDefinition, models: ModelRegistry, schemas: Schemas, generic: boolean): Operation {
  const input = resolveSchema(workflow, workflow.trigger.inputSchema, 'input', models);
  const output = workflow.trigger.responseSchema !== null ? resolveSchema(workflow, workflow.trigger.responseSchema, 'response', models) : undefined;
  const inputName = `${workflow.name}.input`;
  schemas[inputName] = 'schema' in input ? input.schema : { type: 'object' };
  if (output && 'schema' in output) schemas[`${workflow.name}.output`] = output.schema;
  const gated = workflow.requiredScope !== null || workflow.requiredGroup !== null;
  const isPublic = workflow.trigger.isPublic && !gated;
  const gates = [workflow.requiredScope && `scope \`${workflow.requiredScope}\``, workflow.requiredGroup && `group \`${workflow.requiredGroup}\``]
    .filter(Boolean)
    .join(' and ');
  const op = operation({
    operationId: generic ? `run_${workflow.name}` : `trigger_${workflow.name}`,
    summary: workflow.description ?? `Run ${workflow.name}`,
    description: [
      `Runs workflow \`${workflow.name}\` (${workflow.version}). Answers 201 with the output (header \`X-Svc-Run-Id\`), or 202 with the run when it waits for a human or runs longer than the sync timeout; \`?wait=false\` answers 202 at once. \`Accept: text/event-stream\` streams step events.`,
      gates ? `Requires ${gates} (or \`iam:admin\`).` : undefined,
      concurrencyNote(workflow),
    ]
      .filter(Boolean)
      .join('\n\n'),
    tags: ['Workflows'],
    isPublic,
    body: ref(inputName),
    query: [{ name: 'wait', schema: { type: 'boolean' }, description: 'false: answer 202 at once' }],
    headers: [IDEMPOTENCY_KEY],
    ok: {
      status: 201,
      description: 'The run completed: its output',
      schema: output && 'schema' in output ? ref(`${workflow.name}.output`) : {},
      headers: { 'Idempotent-Replayed': { description: '`true`: the answer of the first request with this Idempotency-Key', schema: { type: 'string' } } },
    },
    errors: gated ? [403] : [],
    extraResponses: {
      202: { description: 'The run is waiting or still running', content: { 'application/json': { schema: ref('Run') } } },
      400: {
        description:
          'The run ended through an error route (WorkflowError), or the request was refused before any run (Error: an Idempotency-Key that is empty or not 1-255 printable ASCII, a body that is not JSON or does not match its Content-Encoding)',
        content: { 'application/json': { schema: { anyOf: [ref('WorkflowError'), ref('Error')] } } },
      },
      405: { description: 'Wrong method for this trigger path' },
      413: ERRORS[413],
      ...(workflow.concurrency?.onLimit === 'reject'
        ? {
            429: { ...ERRORS[429], description: 'The concurrency limit is full (`TOO_MANY_REQUESTS`, header `Retry-After`): nothing was started.' },
          }
        : {}),
      500: envelope('The run failed'),
      503: {
        description:
          'The database is unavailable (header `Retry-After`): nothing was recorded, start the run again later. With `X-Svc-Run-Id`, the connection broke while the run was being recorded: look it up before starting it again.',
        content: { 'application/json': { schema: ref('Error') } },
      },
    },
  });
  op.responses = { ...op.responses, 422: TRIGGER_422, ...responseStepAnswers(workflow, (op.responses ?? {}) as Record<string, OpenAPIV3_1.ResponseObject>) };
  return op;
}

/**
 * The statuses the workflow's Response steps answer with (`status_code`, 201 unless set): the output
 * they map, any JSON. Where another answer has the status already (a 400 or 500 envelope), either may come.
 */
function responseStepAnswers(workflow: WorkflowDefinition, documented: Record<string, OpenAPIV3_1.ResponseObject>): Record<string, OpenAPIV3_1.ResponseObject> {
  const answers: Record<string, OpenAPIV3_1.ResponseObject> = {};
  for (const step of workflow.steps) {
    const status = step.config.status_code;
    if (step.kind !== 'Response' || typeof status !== 'number' || status === 201) continue;
    const key = String(status);
    const said = `The output of Response step \`${step.id}\` (its \`status_code\` ${status})`;
    const earlier = answers[key] ?? documented[key];
    answers[key] = earlier
      ? { description: `${earlier.description}; or ${said}`, content: { 'application/json': { schema: {} } } }
      : { description: said, content: { 'application/json': { schema: {} } } };
  }
  return answers;
}

/** What spec.concurrency does to a start, for the operation's description. */
function concurrencyNote(workflow: WorkflowDefinition): string | undefined {
  const limit = workflow.concurrency;
  if (!limit) return undefined;
  const per = limit.key ? ` per value of \`${limit.key}\`` : '';
  const full =
    limit.onLimit === 'reject' ? 'a start is refused with 429 and `Retry-After`' : 'a run waits as `queued` and starts in arrival order as slots free';
  return `At most ${limit.limit} run(s) execute at once${per}; beyond that ${full}.`;
}

export function workflowPaths(workflows: WorkflowRegistry, models: ModelRegistry, schemas: Schemas): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const workflow of workflows.activeAll()) {
    if (workflow.trigger.path) {
      const method = workflow.trigger.method.toLowerCase() as keyof PathItem;
      paths[workflow.trigger.path] = { ...(paths[workflow.trigger.path] ?? {}), [method]: triggerOperation(workflow, models, schemas, false) };
    }
    paths[`/api/workflows/${workflow.name}/runs`] = { post: triggerOperation(workflow, models, schemas, true) };
  }
  return paths;
}

export function modelPaths(registry: ModelRegistry, schemas: Schemas): Record<string, PathItem> {
  const paths: Record<string, PathItem> = {};
  for (const name of registry.names()) {
    const model = registry.active(name);
    if (!model || model.crud.length === 0) continue;
    for (const variant of ['create', 'read', 'update'] as Variant[]) {
      const { title: _title, ...schema } = variantSchema(model, variant);
      schemas[`${model.name}.${variant}`] = schema as Schema;
    }
    Object.assign(paths, crudPaths(model));
  }
  return paths;
}

function crudPaths(model: ModelDefinition): Record<string, PathItem> {
  const tags = [`Model ${model.name}`];
  const { access, crud } = model;
  const read = ref(`${model.name}.read`);
  const include = {
    name: 'include',
    schema: { type: 'string' as const },
    description: `Comma-joined relations: ${model.relations.map((r) => r.name).join(', ') || 'none'}`,
  };
  const collection: PathItem = {};
  const item: PathItem = {};
  if (crud.includes('list')) {
    collection.get = operation({
      operationId: `list_${model.slug}`,
      summary: `List ${model.name} records`,
      tags,
      scope: access.readScope,
      query: [
        { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        { name: 'offset', schema: { type: 'integer', minimum: 0, default: 0 } },
        include,
      ],
      ok: { status: 200, description: 'Records', schema: { type: 'array', items: read } },
      errors: [400, 403, 422],
    });
    // filter[field]=value, one parameter per filterable field.
    collection.get.parameters = [
      ...(collection.get.parameters ?? []),
      {
        name: 'filter',
        in: 'query',
        style: 'deepObject',
        explode: true,
        schema: { type: 'object', properties: Object.fromEntries(model.fields.filter((f) => f.filterable).map((f) => [f.name, { type: 'string' }])) },
      } as unknown as OpenAPIV3_1.ParameterObject,
    ];
  }
  if (crud.includes('create')) {
    collection.post = operation({
      operationId: `create_${model.slug}`,
      summary: `Create a ${model.name}`,
      tags,
      scope: access.writeScope,
      body: ref(`${model.name}.create`),
      ok: { status: 201, description: 'The record', schema: read },
      errors: [400, 403],
    });
  }
  if (crud.includes('read')) {
    item.get = operation({
      operationId: `read_${model.slug}`,
      summary: `Read a ${model.name}`,
      tags,
      scope: access.readScope,
      path: ['id'],
      query: [include],
      ok: { status: 200, description: 'The record', schema: read },
      errors: [400, 403, 404],
    });
  }
  if (crud.includes('update')) {
    item.patch = operation({
      operationId: `update_${model.slug}`,
      summary: `Update a ${model.name} (only the fields sent change)`,
      tags,
      scope: access.writeScope,
      path: ['id'],
      body: ref(`${model.name}.update`),
      ok: { status: 200, description: 'The record', schema: read },
      errors: [403, 404],
    });
  }
  if (crud.includes('delete')) {
    item.delete = operation({
      operationId: `delete_${model.slug}`,
      summary: `Delete a ${model.name}`,
      tags,
      scope: access.deleteScope,
      path: ['id'],
      ok: { status: 204, description: 'Deleted' },
      errors: [403, 404],
    });
  }
  return {
    ...(Object.keys(collection).length ? { [`/models/${model.slug}/`]: collection } : {}),
    ...(Object.keys(item).length ? { [`/models/${model.slug}/{id}`]: item } : {}),
  };
}
