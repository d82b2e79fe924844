// The form of a human step (`human_feedback`) as a JSON Schema, so decisions are validated like any input.
import type { FieldType } from '../models/definition.js';
import { fieldSchema, type JsonSchema } from '../models/schemas.js';

export interface FeedbackField {
  name: string;
  type?: string;
  required?: boolean;
  options?: string[];
  label?: string;
}

export function formSchema(fields: FeedbackField[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const field of fields) {
    const type = (field.type ?? 'string') as FieldType;
    properties[field.name] = fieldSchema(
      {
        name: field.name,
        type: field.options ? 'enum' : type,
        primaryKey: false,
        required: field.required === true,
        input: true,
        filterable: false,
        ...(field.options ? { enumValues: field.options } : {}),
      },
      field.required !== true,
    );
  }
  const required = fields.filter((f) => f.required === true).map((f) => f.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
