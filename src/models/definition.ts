// ModelDefinition documents: parsed, checked and turned into a typed model (fields, relations, access).
import { compileValidator } from '../kernel/validation.js';
import type { ProjectDocument } from '../project/documents.js';

export const FIELD_TYPES = ['string', 'text', 'integer', 'float', 'boolean', 'uuid', 'date', 'timestamp', 'jsonb', 'enum'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];
export const CRUD_OPERATIONS = ['list', 'read', 'create', 'update', 'delete'] as const;
export type CrudOperation = (typeof CRUD_OPERATIONS)[number];

export interface FieldDefinition {
  name: string;
  type: FieldType;
  primaryKey: boolean;
  required: boolean;
  /** Accepted on create (and patchable); false for service-filled fields. */
  input: boolean;
  filterable: boolean;
  enumValues?: string[];
  description?: string;
  /** `personal: true` (string and text fields): sealed per record in events and the table (docs/privacy.md). */
  personal?: boolean;
}

export interface RelationDefinition {
  name: string;
  model: string;
  foreignKey: string;
  type: 'many_to_one' | 'one_to_many';
}

export interface ModelAccess {
  readScope: string;
  writeScope: string;
  deleteScope: string;
  readGroups: string[];
  writeGroups: string[];
  deleteGroups: string[];
}

export interface ModelDefinition {
  name: string;
  /** Lower-cased name: the path segment under /models/ and the scope prefix. */
  slug: string;
  version: string;
  description: string | null;
  enabledByDefault: boolean;
  tablename: string;
  datasource: string;
  fields: FieldDefinition[];
  primaryKey: FieldDefinition;
  relations: RelationDefinition[];
  crud: CrudOperation[];
  access: ModelAccess;
  file: string;
  /** The document as written, for forks. */
  source: Record<string, unknown>;
}

const NAME = '^[A-Za-z][A-Za-z0-9_]*$';
const SQL_NAME = '^[a-z_][a-z0-9_]{0,62}$';
const groupList = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'null' }] };

const documentSchema = compileValidator<RawModel>({
  type: 'object',
  required: ['kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    kind: { const: 'ModelDefinition' },
    version: { type: 'string' },
    metadata: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: NAME },
        schema_version: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$' },
        description: { type: ['string', 'null'] },
        enabled: { type: 'boolean' },
      },
    },
    spec: {
      type: 'object',
      required: ['tablename', 'fields'],
      additionalProperties: false,
      properties: {
        tablename: { type: 'string', pattern: SQL_NAME },
        datasource: { type: 'string' },
        description: { type: 'string' },
        fields: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['name', 'type'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', pattern: SQL_NAME },
              type: { enum: [...FIELD_TYPES] },
              primary_key: { type: 'boolean' },
              required: { type: 'boolean' },
              input: { type: 'boolean' },
              filterable: { type: 'boolean' },
              enum_values: { type: 'array', items: { type: 'string' }, minItems: 1 },
              personal: { type: 'boolean' },
              description: { type: 'string' },
            },
          },
        },
        relations: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'model', 'foreign_key'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', pattern: SQL_NAME },
              model: { type: 'string', pattern: NAME },
              foreign_key: { type: 'string', pattern: SQL_NAME },
              type: { enum: ['many_to_one', 'one_to_many'] },
            },
          },
        },
        api: {
          type: 'object',
          additionalProperties: false,
          properties: { crud: { type: 'array', items: { enum: [...CRUD_OPERATIONS] } } },
        },
        access: {
          type: 'object',
          additionalProperties: false,
          properties: {
            read_scope: { type: 'string' },
            write_scope: { type: 'string' },
            delete_scope: { type: 'string' },
            read_groups: groupList,
            write_groups: groupList,
            delete_groups: groupList,
          },
        },
      },
    },
  },
});

interface RawField {
  name: string;
  type: FieldType;
  primary_key?: boolean;
  required?: boolean;
  input?: boolean;
  filterable?: boolean;
  enum_values?: string[];
  description?: string;
  personal?: boolean;
}

interface RawModel {
  kind: 'ModelDefinition';
  metadata: { name: string; schema_version?: string; description?: string | null; enabled?: boolean };
  spec: {
    tablename: string;
    datasource?: string;
    description?: string;
    fields: RawField[];
    relations?: { name: string; model: string; foreign_key: string; type?: 'many_to_one' | 'one_to_many' }[];
    api?: { crud?: CrudOperation[] };
    access?: {
      read_scope?: string;
      write_scope?: string;
      delete_scope?: string;
      read_groups?: string | string[] | null;
      write_groups?: string | string[] | null;
      delete_groups?: string | string[] | null;
    };
  };
}

/** Tables the service owns; a model may not take their names. */
const RESERVED_TABLES = /^(events|schema_migrations|projection_state|iam_.*|svc_.*|pg_.*)$/;
const SERVICE_FILLED = new Set(['created_at', 'updated_at']);
const NAME_PATTERN = /^[\w:.\-/]+$/;

/** Parses one document; answers the model or the list of problems with it. */
export function parseModelDefinition(document: ProjectDocument): { model?: ModelDefinition; problems: string[] } {
  const issues = documentSchema.issues(document.body);
  if (issues.length > 0) return { problems: issues.map((i) => `${i.loc.slice(1).join('.')}: ${i.msg}`) };
  const raw = document.body as unknown as RawModel;
  const problems: string[] = [];
  const fields = raw.spec.fields.map(toField);
  const names = fields.map((f) => f.name);
  names.filter((n, i) => names.indexOf(n) !== i).forEach((n) => problems.push(`field ${n} is declared twice`));
  const keys = fields.filter((f) => f.primaryKey);
  if (keys.length !== 1) problems.push(`exactly one field must be the primary_key (found ${keys.length})`);
  if (keys[0] && keys[0].type !== 'uuid') problems.push('the primary key must be of type uuid (the service fills it)');
  if (names.includes('svc_tenant')) problems.push('svc_tenant is a reserved column');
  fields.filter((f) => f.type === 'enum' && !f.enumValues).forEach((f) => problems.push(`enum field ${f.name} needs enum_values`));
  for (const field of fields.filter((f) => f.personal)) {
    if (field.type !== 'string' && field.type !== 'text') problems.push(`personal field ${field.name} must be of type string or text (it is stored sealed)`);
    if (field.primaryKey) problems.push(`the primary key ${field.name} cannot be personal`);
  }
  if (RESERVED_TABLES.test(raw.spec.tablename)) problems.push(`tablename ${raw.spec.tablename} is reserved for the service`);
  const slug = raw.metadata.name.toLowerCase();
  const access = toAccess(slug, raw.spec.access ?? {});
  for (const name of [access.readScope, access.writeScope, access.deleteScope, ...access.readGroups, ...access.writeGroups, ...access.deleteGroups]) {
    if (!NAME_PATTERN.test(name)) problems.push(`scope or group "${name}" must match ^[\\w:.\\-/]+$`);
  }
  const relations = (raw.spec.relations ?? []).map((r) => ({ name: r.name, model: r.model, foreignKey: r.foreign_key, type: r.type ?? 'many_to_one' }));
  for (const relation of relations) {
    if (relation.type !== 'many_to_one') continue;
    const key = fields.find((f) => f.name === relation.foreignKey);
    // Primary keys are uuids, so a key that points at one is a uuid too (compared as one by include).
    if (!key) problems.push(`relation ${relation.name}: foreign_key ${relation.foreignKey} is not a field`);
    else if (key.type !== 'uuid') problems.push(`relation ${relation.name}: foreign_key ${relation.foreignKey} must be of type uuid`);
  }
  if (problems.length > 0) return { problems };
  return {
    problems,
    model: {
      name: raw.metadata.name,
      slug,
      version: document.version,
      description: raw.metadata.description ?? raw.spec.description ?? null,
      enabledByDefault: raw.metadata.enabled ?? true,
      tablename: raw.spec.tablename,
      datasource: raw.spec.datasource ?? 'primary',
      fields,
      primaryKey: keys[0]!,
      relations,
      crud: [...new Set(raw.spec.api?.crud ?? [])],
      access,
      file: document.file,
      source: document.body,
    },
  };
}

function toField(raw: RawField): FieldDefinition {
  const primaryKey = raw.primary_key ?? false;
  return {
    name: raw.name,
    type: raw.type,
    primaryKey,
    required: raw.required ?? false,
    input: raw.input ?? !(primaryKey || SERVICE_FILLED.has(raw.name)),
    // A sealed value cannot be filtered on: its ciphertext differs every time.
    filterable: raw.personal ? false : (raw.filterable ?? raw.type !== 'jsonb'),
    personal: raw.personal ?? false,
    ...(raw.enum_values ? { enumValues: raw.enum_values } : {}),
    ...(raw.description ? { description: raw.description } : {}),
  };
}

/** The names of a model's `personal: true` fields. */
export function personalFieldsOf(model: ModelDefinition): string[] {
  return model.fields.filter((f) => f.personal).map((f) => f.name);
}

function groupsOf(value: string | string[] | null | undefined): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  return Array.isArray(value) ? value : [value];
}

/** Scopes default to `{model}:read|write|delete`; undeclared group tiers cascade read -> write -> delete. */
function toAccess(slug: string, raw: NonNullable<RawModel['spec']['access']>): ModelAccess {
  const readGroups = groupsOf(raw.read_groups) ?? [];
  const writeGroups = groupsOf(raw.write_groups) ?? readGroups;
  const deleteGroups = groupsOf(raw.delete_groups) ?? writeGroups;
  return {
    readScope: raw.read_scope ?? `${slug}:read`,
    writeScope: raw.write_scope ?? `${slug}:write`,
    deleteScope: raw.delete_scope ?? `${slug}:delete`,
    readGroups,
    writeGroups,
    deleteGroups,
  };
}
