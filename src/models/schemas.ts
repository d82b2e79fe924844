// The three JSON Schema variants of a model (create, read, update), compiled once with ajv.
import { compileValidator, type Validator } from '../kernel/validation.js';
import type { FieldDefinition, FieldType, ModelDefinition } from './definition.js';

export type Variant = 'create' | 'read' | 'update';
export type JsonSchema = Record<string, unknown>;

const TYPE_SCHEMAS: Record<FieldType, JsonSchema> = {
  string: { type: 'string' },
  text: { type: 'string' },
  integer: { type: 'integer' },
  float: { type: 'number' },
  boolean: { type: 'boolean' },
  uuid: { type: 'string', format: 'uuid' },
  date: { type: 'string', format: 'date' },
  timestamp: { type: 'string', format: 'date-time' },
  jsonb: { type: 'object' },
  enum: { type: 'string' },
};

export function fieldSchema(field: FieldDefinition, nullable: boolean): JsonSchema {
  const base: JsonSchema = { ...TYPE_SCHEMAS[field.type] };
  if (field.enumValues) base.enum = nullable ? [...field.enumValues, null] : field.enumValues;
  if (field.description) base.description = field.description;
  if (!nullable) return base;
  return { ...base, type: [base.type as string, 'null'] };
}

/** create: input fields, required ones mandatory; read: every field; update: input fields, all optional. */
export function variantSchema(model: ModelDefinition, variant: Variant): JsonSchema {
  const fields = variant === 'read' ? model.fields : model.fields.filter((f) => f.input);
  const properties = Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f, variant === 'read' ? !f.primaryKey : !f.required || variant === 'update')]));
  const required = variant === 'create' ? fields.filter((f) => f.required).map((f) => f.name) : variant === 'read' ? [model.primaryKey.name] : [];
  return {
    title: `${model.name}.${variant}`,
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

export interface ModelValidators {
  create: Validator<Record<string, unknown>>;
  update: Validator<Record<string, unknown>>;
}

export function compileModelValidators(model: ModelDefinition): ModelValidators {
  return { create: compileValidator(variantSchema(model, 'create')), update: compileValidator(variantSchema(model, 'update')) };
}
