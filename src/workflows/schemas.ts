// Workflow input and response schemas: `context`, `Model.variant`, or an inline field list.
import type { FieldDefinition, FieldType } from '../models/definition.js';
import { FIELD_TYPES } from '../models/definition.js';
import type { ModelRegistry } from '../models/registry.js';
import { fieldSchema, variantSchema, type JsonSchema, type Variant } from '../models/schemas.js';
import type { InlineField, SchemaReference, WorkflowDefinition } from './definition.js';

export type SchemaRole = 'input' | 'response';

/** The JSON Schema of a workflow's input (an unresolvable reference, which validation reports, as any object). */
export function inputSchemaOf(workflow: WorkflowDefinition, models: ModelRegistry): JsonSchema {
  const resolved = resolveSchema(workflow, workflow.trigger.inputSchema, 'input', models);
  return 'schema' in resolved ? resolved.schema : { type: 'object' };
}

/** The JSON Schema a reference stands for, or a problem text (V009). */
export function resolveSchema(
  workflow: WorkflowDefinition,
  reference: SchemaReference | null,
  role: SchemaRole,
  models: ModelRegistry,
): { schema: JsonSchema } | { problem: string } {
  if (reference === null) return { schema: { type: 'object' } };
  if (Array.isArray(reference)) return inlineSchema(workflow, reference);
  if (reference === 'context') {
    const name = workflow.contextModels[0];
    const model = name ? models.active(name) : undefined;
    if (!model) return { problem: `"context" needs spec.context to name an enabled model` };
    return { schema: variantSchema(model, role === 'input' ? 'create' : 'read') };
  }
  const match = /^([A-Za-z][A-Za-z0-9_]*)\.(create|read|update)$/.exec(reference);
  if (!match) return { problem: `schema reference "${reference}" is not context, Model.create|read|update or a field list` };
  const model = models.active(match[1]!);
  if (!model) return { problem: `schema reference "${reference}" names no enabled model` };
  return { schema: variantSchema(model, match[2] as Variant) };
}

/** Inline fields take the model field types plus `array` (any JSON array) and `any` (any JSON value). */
const INLINE_ONLY: Record<string, JsonSchema> = { array: { type: 'array' }, any: {} };

function inlineSchema(workflow: WorkflowDefinition, fields: InlineField[]): { schema: JsonSchema } | { problem: string } {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const raw of fields) {
    if (raw && typeof raw.name === 'string' && raw.type in INLINE_ONLY) {
      properties[raw.name] = INLINE_ONLY[raw.type]!;
      if (raw.required === true) required.push(raw.name);
      continue;
    }
    if (!raw || typeof raw.name !== 'string' || !FIELD_TYPES.includes(raw.type as FieldType)) {
      return {
        problem: `${workflow.name}: inline field ${JSON.stringify(raw)} needs a name and a type of ${[...FIELD_TYPES, ...Object.keys(INLINE_ONLY)].join(', ')}`,
      };
    }
    const field: FieldDefinition = {
      name: raw.name,
      type: raw.type as FieldType,
      primaryKey: false,
      required: raw.required === true,
      input: true,
      filterable: false,
      ...(raw.enum_values ? { enumValues: raw.enum_values } : {}),
    };
    properties[raw.name] = fieldSchema(field, !field.required);
    if (field.required) required.push(raw.name);
  }
  return { schema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false } };
}
