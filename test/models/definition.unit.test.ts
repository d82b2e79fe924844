// ModelDefinition parsing (problems, access cascade) and the create/read/update JSON Schema variants.
import { expect } from 'chai';
import { parseModelDefinition, type ModelDefinition } from '../../src/models/definition.js';
import { parseModels } from '../../src/models/boot.js';
import { compileModelValidators, fieldSchema, variantSchema } from '../../src/models/schemas.js';
import { ValidationError } from '../../src/kernel/errors.js';
import type { ProjectDocument } from '../../src/project/documents.js';

type Field = Record<string, unknown>;

function document(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): ProjectDocument {
  return {
    kind: 'ModelDefinition',
    name: 'Thing',
    version: 'v1',
    file: 'models/thing.yaml',
    body: { kind: 'ModelDefinition', metadata: { name: 'Thing', schema_version: 'v1', ...metadata }, spec },
  };
}

const ID: Field = { name: 'id', type: 'uuid', primary_key: true };
const validSpec = (extra: Record<string, unknown> = {}, fields: Field[] = [ID, { name: 'title', type: 'string' }]) => ({
  tablename: 'things',
  fields,
  ...extra,
});

function problemsOf(spec: Record<string, unknown>): string[] {
  const parsed = parseModelDefinition(document(spec));
  expect(parsed.model, 'an invalid definition must not yield a model').to.equal(undefined);
  return parsed.problems;
}

function modelOf(spec: Record<string, unknown>): ModelDefinition {
  const parsed = parseModelDefinition(document(spec));
  expect(parsed.problems).to.deep.equal([]);
  return parsed.model!;
}

describe('parseModelDefinition', () => {
  it('accepts a valid definition with defaults (datasource primary, scopes {model}:read|write|delete, no groups)', () => {
    const model = modelOf(validSpec());
    expect(model).to.include({ name: 'Thing', slug: 'thing', version: 'v1', tablename: 'things', datasource: 'primary', description: null });
    expect(model.primaryKey.name).to.equal('id');
    expect(model.crud).to.deep.equal([]);
    expect(model.access).to.deep.equal({
      readScope: 'thing:read',
      writeScope: 'thing:write',
      deleteScope: 'thing:delete',
      readGroups: [],
      writeGroups: [],
      deleteGroups: [],
    });
  });

  it('refuses two primary keys', () => {
    const problems = problemsOf(validSpec({}, [ID, { name: 'other', type: 'uuid', primary_key: true }]));
    expect(problems.join('\n')).to.match(/exactly one field must be the primary_key \(found 2\)/);
  });

  it('refuses a definition without a primary key', () => {
    expect(problemsOf(validSpec({}, [{ name: 'title', type: 'string' }])).join('\n')).to.match(/found 0/);
  });

  it('refuses a primary key that is not a uuid', () => {
    const problems = problemsOf(validSpec({}, [{ name: 'id', type: 'integer', primary_key: true }]));
    expect(problems.join('\n')).to.match(/primary key must be of type uuid/);
  });

  for (const table of ['iam_users', 'events', 'schema_migrations', 'projection_state', 'svc_definition_versions', 'pg_class']) {
    it(`refuses the reserved table name ${table}`, () => {
      expect(problemsOf(validSpec({ tablename: table })).join('\n')).to.include(`tablename ${table} is reserved`);
    });
  }

  it('refuses table and field names that are not plain SQL names', () => {
    expect(problemsOf(validSpec({ tablename: 'things; DROP TABLE events' })).join('\n')).to.match(/tablename/);
    expect(problemsOf(validSpec({}, [ID, { name: 'Title"', type: 'string' }])).join('\n')).to.match(/fields\.1\.name/);
  });

  it('refuses an enum without values, and an empty value list', () => {
    expect(problemsOf(validSpec({}, [ID, { name: 'state', type: 'enum' }])).join('\n')).to.include('enum field state needs enum_values');
    expect(problemsOf(validSpec({}, [ID, { name: 'state', type: 'enum', enum_values: [] }]))).to.not.be.empty;
  });

  it('refuses a many_to_one relation whose foreign key is not a field', () => {
    const problems = problemsOf(validSpec({ relations: [{ name: 'owner', model: 'Agent', foreign_key: 'owner_id', type: 'many_to_one' }] }));
    expect(problems.join('\n')).to.include('relation owner: foreign_key owner_id is not a field');
  });

  it('refuses a many_to_one relation whose foreign key is not a uuid (it points at a uuid primary key)', () => {
    const problems = problemsOf(validSpec({ relations: [{ name: 'owner', model: 'Agent', foreign_key: 'title', type: 'many_to_one' }] }));
    expect(problems.join('\n')).to.include('relation owner: foreign_key title must be of type uuid');
  });

  it('accepts a one_to_many relation whose foreign key lives on the other model', () => {
    const model = modelOf(validSpec({ relations: [{ name: 'children', model: 'Child', foreign_key: 'thing_id', type: 'one_to_many' }] }));
    expect(model.relations).to.deep.equal([{ name: 'children', model: 'Child', foreignKey: 'thing_id', type: 'one_to_many' }]);
  });

  it('refuses scope and group names outside ^[\\w:.\\-/]+$', () => {
    expect(problemsOf(validSpec({ access: { read_scope: 'tickets read' } })).join('\n')).to.include('"tickets read"');
    expect(problemsOf(validSpec({ access: { write_scope: 'x;y' } })).join('\n')).to.include('"x;y"');
    expect(problemsOf(validSpec({ access: { read_groups: ['ok', 'not ok'] } })).join('\n')).to.include('"not ok"');
    expect(problemsOf(validSpec({ access: { delete_groups: 'a,b' } })).join('\n')).to.include('"a,b"');
    expect(problemsOf(validSpec({ access: { read_scope: '' } })).join('\n')).to.include('""');
  });

  it('refuses a field declared twice, the reserved svc_tenant column, unknown types and unknown keys', () => {
    expect(problemsOf(validSpec({}, [ID, { name: 'a', type: 'string' }, { name: 'a', type: 'text' }])).join('\n')).to.include('field a is declared twice');
    expect(problemsOf(validSpec({}, [ID, { name: 'svc_tenant', type: 'string' }])).join('\n')).to.include('svc_tenant is a reserved column');
    expect(problemsOf(validSpec({}, [ID, { name: 'a', type: 'money' }]))).to.not.be.empty;
    expect(problemsOf(validSpec({ api: { crud: ['list', 'truncate'] } }))).to.not.be.empty;
    expect(problemsOf(validSpec({ surprise: true }))).to.not.be.empty;
  });

  describe('access cascade', () => {
    const accessOf = (access: Record<string, unknown>) => modelOf(validSpec({ access })).access;

    it('write_groups falls back to read_groups and delete_groups to write_groups', () => {
      const access = accessOf({ read_groups: ['a', 'b'] });
      expect([access.readGroups, access.writeGroups, access.deleteGroups]).to.deep.equal([
        ['a', 'b'],
        ['a', 'b'],
        ['a', 'b'],
      ]);
    });

    it('delete_groups falls back to a declared write_groups, not to read_groups', () => {
      const access = accessOf({ read_groups: ['readers'], write_groups: ['writers'] });
      expect([access.readGroups, access.writeGroups, access.deleteGroups]).to.deep.equal([['readers'], ['writers'], ['writers']]);
    });

    it('a declared delete_groups stands on its own', () => {
      const access = accessOf({ read_groups: ['readers'], delete_groups: ['admins'] });
      expect([access.readGroups, access.writeGroups, access.deleteGroups]).to.deep.equal([['readers'], ['readers'], ['admins']]);
    });

    it('accepts a single group name as well as a list', () => {
      const access = accessOf({ read_groups: 'support', write_groups: ['leads', 'ops'], delete_groups: 'ops' });
      expect([access.readGroups, access.writeGroups, access.deleteGroups]).to.deep.equal([['support'], ['leads', 'ops'], ['ops']]);
    });

    it('honours scope overrides per tier, keeping the defaults for the others', () => {
      const access = accessOf({ read_scope: 'things:see' });
      expect([access.readScope, access.writeScope, access.deleteScope]).to.deep.equal(['things:see', 'thing:write', 'thing:delete']);
    });
  });
});

describe('variantSchema', () => {
  const model = modelOf(
    validSpec({}, [
      ID,
      { name: 's', type: 'string', required: true },
      { name: 't', type: 'text' },
      { name: 'i', type: 'integer', required: true },
      { name: 'f', type: 'float' },
      { name: 'b', type: 'boolean' },
      { name: 'u', type: 'uuid' },
      { name: 'd', type: 'date' },
      { name: 'ts', type: 'timestamp' },
      { name: 'j', type: 'jsonb' },
      { name: 'e', type: 'enum', enum_values: ['x', 'y'] },
      { name: 'computed', type: 'string', input: false },
      { name: 'created_at', type: 'timestamp' },
      { name: 'updated_at', type: 'timestamp' },
    ]),
  );
  const EXPECTED_TYPES: Record<string, Record<string, unknown>> = {
    s: { type: 'string' },
    t: { type: 'string' },
    i: { type: 'integer' },
    f: { type: 'number' },
    b: { type: 'boolean' },
    u: { type: 'string', format: 'uuid' },
    d: { type: 'string', format: 'date' },
    ts: { type: 'string', format: 'date-time' },
    j: { type: 'object' },
  };
  const baseType = (schema: Record<string, unknown>) => (Array.isArray(schema.type) ? schema.type[0] : schema.type);
  const props = (variant: 'create' | 'read' | 'update') => variantSchema(model, variant).properties as Record<string, Record<string, unknown>>;

  for (const variant of ['create', 'read', 'update'] as const) {
    it(`${variant}: maps every field type as SPEC's table says`, () => {
      const properties = props(variant);
      for (const [name, expected] of Object.entries(EXPECTED_TYPES)) {
        expect(baseType(properties[name]!), `${variant}.${name}`).to.equal(expected.type);
        expect(properties[name]!.format, `${variant}.${name} format`).to.equal(expected.format);
      }
      expect(baseType(properties.e!)).to.equal('string');
      expect(properties.e!.enum).to.include.members(['x', 'y']);
      expect(variantSchema(model, variant)).to.include({ type: 'object', additionalProperties: false, title: `Thing.${variant}` });
    });
  }

  it('create: only input fields, required ones mandatory, optional ones nullable', () => {
    const schema = variantSchema(model, 'create');
    expect(Object.keys(schema.properties as object)).to.have.members(['s', 't', 'i', 'f', 'b', 'u', 'd', 'ts', 'j', 'e']);
    expect(schema.required).to.have.members(['s', 'i']);
    expect(props('create').s!.type).to.equal('string');
    expect(props('create').t!.type).to.deep.equal(['string', 'null']);
  });

  it('update: the same input fields, none required', () => {
    const schema = variantSchema(model, 'update');
    expect(Object.keys(schema.properties as object)).to.have.members(['s', 't', 'i', 'f', 'b', 'u', 'd', 'ts', 'j', 'e']);
    expect(schema).to.not.have.property('required');
  });

  it('update: required fields are never nullable, optional ones are', () => {
    expect(props('update').s!.type).to.equal('string');
    expect(props('update').i!.type).to.equal('integer');
    expect(props('update').t!.type).to.deep.equal(['string', 'null']);
    const update = compileModelValidators(model).update;
    expect(update.issues({ s: null })).to.deep.equal([{ loc: ['body', 's'], msg: 'Input should be a valid string', type: 'string_type' }]);
    expect(update.issues({ t: null, e: null, d: null, ts: null, i: 3 })).to.deep.equal([]);
  });

  it('create and update refuse what the columns cannot hold: NUL anywhere, integers past ±(2^53−1), year 0, offsets of 16 hours', () => {
    const { create, update } = compileModelValidators(model);
    const typesOf = (body: Record<string, unknown>) =>
      [...create.issues({ s: 'x', i: 1, ...body }), ...update.issues(body)].map((i) => `${i.loc.join('.')}:${i.type}`);
    expect(typesOf({ s: 'a\u0000' })).to.deep.equal(['body.s:value_error', 'body.s:value_error']);
    expect(typesOf({ j: { list: ['ok', 'n\u0000'] } })).to.deep.equal(['body.j.list.1:value_error', 'body.j.list.1:value_error']);
    expect(typesOf({ j: { 'k\u0000': 1 } })).to.deep.equal(['body.j.k\u0000:value_error', 'body.j.k\u0000:value_error']);
    expect(typesOf({ i: 2 ** 53 })).to.deep.equal(['body.i:less_than_equal', 'body.i:less_than_equal']);
    expect(typesOf({ i: -(2 ** 53) })).to.deep.equal(['body.i:greater_than_equal', 'body.i:greater_than_equal']);
    expect(typesOf({ d: '0000-12-31' })).to.have.length(2);
    expect(typesOf({ ts: '0000-01-01T00:00:00Z' })).to.have.length(2);
    expect(typesOf({ ts: '2024-01-01T00:00:00+16:00' })).to.have.length(2);
    expect(typesOf({ ts: '2024-01-01T00:00:00-2330' })).to.have.length(2);
    expect(typesOf({ i: Number.MAX_SAFE_INTEGER, d: '0001-01-01', ts: '2024-01-01T00:00:00+15:59', t: 'no nul here', j: { ok: 'yes' } })).to.deep.equal([]);
    expect(typesOf({ ts: '2024-01-01t00:00:00z' })).to.deep.equal([]);
    expect(() => update.parse({ t: 'a\u0000b' })).to.throw(ValidationError);
  });

  it('inline field schemas (workflows, approval forms) stay the plain type mapping', () => {
    expect(
      fieldSchema(
        model.fields.find((f) => f.name === 'i')!,
        true,
      ),
    ).to.deep.equal({ type: ['integer', 'null'] });
  });

  it('read: every field, id a uuid and created_at a date-time, only the primary key required', () => {
    const schema = variantSchema(model, 'read');
    expect(Object.keys(schema.properties as object)).to.have.members([...model.fields.map((f) => f.name)]);
    expect(props('read').id).to.deep.equal({ type: 'string', format: 'uuid' });
    expect(baseType(props('read').created_at!)).to.equal('string');
    expect(props('read').created_at!.format).to.equal('date-time');
    expect(schema.required).to.deep.equal(['id']);
  });

  it('input: false fields (explicit, primary key, created_at/updated_at) never reach create or update', () => {
    for (const variant of ['create', 'update'] as const) {
      for (const name of ['id', 'computed', 'created_at', 'updated_at']) expect(props(variant), `${variant}.${name}`).to.not.have.property(name);
    }
  });
});

describe('parseModels', () => {
  const doc = (name: string, spec: Record<string, unknown>, version = 'v1'): ProjectDocument => ({
    kind: 'ModelDefinition',
    name,
    version,
    file: `models/${name.toLowerCase()}_${version}.yaml`,
    body: { kind: 'ModelDefinition', metadata: { name, schema_version: version }, spec },
  });
  const parent = (relation: Record<string, unknown>) =>
    doc('Parent', { tablename: 'parents', fields: [ID], relations: [{ name: 'children', model: 'Child', type: 'one_to_many', ...relation }] });
  const child = (fields: Field[], version = 'v1') => doc('Child', { tablename: 'children', fields: [ID, ...fields] }, version);

  it('accepts a one_to_many whose foreign_key is a uuid field of the related model', () => {
    const { models, problems } = parseModels([parent({ foreign_key: 'parent_id' }), child([{ name: 'parent_id', type: 'uuid' }])]);
    expect(problems).to.deep.equal([]);
    expect(models.map((m) => m.name)).to.deep.equal(['Parent', 'Child']);
  });

  it('accepts the foreign_key when only some versions of the related model declare it', () => {
    const { problems } = parseModels([parent({ foreign_key: 'parent_id' }), child([]), child([{ name: 'parent_id', type: 'uuid' }], 'v2')]);
    expect(problems).to.deep.equal([]);
  });

  it('refuses a one_to_many whose foreign_key is not a field of the related model', () => {
    const { problems } = parseModels([parent({ foreign_key: 'parent_id' }), child([{ name: 'other_id', type: 'uuid' }])]);
    expect(problems).to.deep.equal(['models/parent_v1.yaml: relation children: foreign_key parent_id is not a field of Child']);
  });

  it('refuses a one_to_many whose foreign_key on the related model is not a uuid', () => {
    const { problems } = parseModels([parent({ foreign_key: 'parent_id' }), child([{ name: 'parent_id', type: 'string' }])]);
    expect(problems).to.deep.equal(['models/parent_v1.yaml: relation children: foreign_key parent_id of Child must be of type uuid']);
  });

  it('still refuses a relation to an unknown model', () => {
    const { problems } = parseModels([parent({ foreign_key: 'parent_id' })]);
    expect(problems).to.deep.equal(['models/parent_v1.yaml: relation children names unknown model Child']);
  });

  it('refuses two model names that differ only in case (one path /models/{name_lower}/, one scope prefix)', () => {
    const { problems } = parseModels([doc('Ticket', { tablename: 'tickets', fields: [ID] }), doc('TICKET', { tablename: 'other_tickets', fields: [ID] })]);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.include('Ticket, TICKET').and.to.include('differ only in case');
  });
});
