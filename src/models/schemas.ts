// The three JSON Schema variants of a model (create, read, update), compiled once with ajv.
import { ValidationError } from '../kernel/errors.js';
import { inspectJson } from '../kernel/json.js';
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

/**
 * What a model column holds beyond the JSON type, so that a value PostgreSQL would refuse is a 422
 * here: integers a JSON number carries exactly (bigint itself is wider), no year 0, and UTC
 * offsets under 16 hours. Plain JSON Schema, as the OpenAPI and MCP documents show them. Only
 * model variants carry them: inline workflow fields never reach a column.
 */
const COLUMN_LIMITS: Partial<Record<FieldType, JsonSchema>> = {
  integer: { minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
  date: { pattern: '^(?!0000-)' },
  timestamp: { pattern: '^(?!0000-).*(?:[Zz]|[+-](?:0\\d|1[0-5])(?::?\\d\\d)?)$' },
};

export function fieldSchema(field: FieldDefinition, nullable: boolean): JsonSchema {
  const base: JsonSchema = { ...TYPE_SCHEMAS[field.type] };
  if (field.enumValues) base.enum = nullable ? [...field.enumValues, null] : field.enumValues;
  if (field.description) base.description = field.description;
  if (!nullable) return base;
  return { ...base, type: [base.type as string, 'null'] };
}

/** create: input fields, required ones mandatory; read: every field; update: input fields, all optional, required ones never null. */
export function variantSchema(model: ModelDefinition, variant: Variant): JsonSchema {
  const fields = variant === 'read' ? model.fields : model.fields.filter((f) => f.input);
  const properties = Object.fromEntries(
    fields.map((f) => [f.name, { ...fieldSchema(f, variant === 'read' ? !f.primaryKey : !f.required), ...COLUMN_LIMITS[f.type] }]),
  );
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
  return {
    create: refusingUnstorableText(compileValidator(variantSchema(model, 'create'))),
    update: refusingUnstorableText(compileValidator(variantSchema(model, 'update'))),
  };
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000 or a lone surrogate, in a value or a key at any depth
 * (jsonb fields included). HTTP bodies are refused at the edge already; records a workflow writes
 * (ModelOp) carry step outputs, which are checked here.
 */
function refusingUnstorableText<T>(validator: Validator<T>): Validator<T> {
  const textIssues = (value: unknown) => inspectJson(value, ['body']).unstorable;
  const issues = (value: unknown) => [...validator.issues(value), ...textIssues(value)];
  const check = ((value: unknown) => issues(value).length === 0) as Validator<T>;
  check.issues = issues;
  check.parse = (value: unknown): T => {
    const parsed = validator.parse(value);
    const found = textIssues(value);
    if (found.length > 0) throw new ValidationError(found);
    return parsed;
  };
  return check;
}
