// fast-check arbitraries derived from the JSON Schemas of an OpenAPI 3.1 document: values that
// validate against a schema (refs to components resolved), for request bodies, queries and parameters.
import fc from 'fast-check';

/** A JSON Schema node (the document's own, of any shape): `any` because schemas are untyped JSON. */
export type Schema = Record<string, any>;
export type Components = Record<string, Schema>;

const MAX_DEPTH = 4;

/** The schema behind a `$ref` to `#/components/schemas/X` (or the schema itself). */
export function resolve(schema: Schema, components: Components): Schema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops++) {
    current = components[current.$ref.replace('#/components/schemas/', '')] ?? {};
  }
  return current;
}

const ISO_DATES = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());

function stringOf(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time') return ISO_DATES;
  if (schema.format === 'email') return fc.emailAddress();
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(minLength, 24);
  if (typeof schema.pattern === 'string') {
    return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

function numberOf(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : -1e6;
  const max = typeof schema.maximum === 'number' ? schema.maximum : 1e6;
  if (integer) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
  return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function objectOf(schema: Schema, components: Components, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) record[name] = valueOf(property, components, depth + 1);
  const known = fc.record(record, { requiredKeys: [...required].filter((name) => name in properties) });
  // Required names without a property schema: any JSON value satisfies them.
  const missing = [...required].filter((name) => !(name in properties));
  const extra = missing.length === 0 ? fc.constant({}) : fc.record(Object.fromEntries(missing.map((name) => [name, fc.string()])));
  const free = schema.additionalProperties;
  const additional =
    free && typeof free === 'object' && Object.keys(properties).length === 0
      ? fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), valueOf(free, components, depth + 1), { maxKeys: 3 })
      : fc.constant({});
  return fc.tuple(known, extra, additional).map(([a, b, c]) => ({ ...c, ...b, ...a }));
}

/** Values that validate against `schema`; deep or unconstrained parts stay small. */
export function valueOf(schema: Schema | undefined, components: Components, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object') return fc.jsonValue({ maxDepth: 1 });
  const s = resolve(schema, components);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.oneOf) || Array.isArray(s.anyOf)) {
    const options = ((s.oneOf ?? s.anyOf) as Schema[]).map((option) => valueOf(option, components, depth + 1));
    return fc.oneof(...options);
  }
  if (Array.isArray(s.allOf)) return valueOf(Object.assign({}, ...(s.allOf as Schema[]).map((part) => resolve(part, components))), components, depth);
  const type = Array.isArray(s.type) ? (s.type as string[]) : s.type === undefined ? undefined : [s.type as string];
  if (!type) return depth >= MAX_DEPTH ? fc.constant(null) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...type.map((t) => valueOfType(s, t, components, depth)));
}

function valueOfType(s: Schema, type: string, components: Components, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringOf(s);
    case 'integer':
      return numberOf(s, true);
    case 'number':
      return numberOf(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      if (depth >= MAX_DEPTH) return fc.constant([]);
      return fc.array(valueOf(s.items as Schema | undefined, components, depth + 1), {
        minLength: typeof s.minItems === 'number' ? s.minItems : 0,
        maxLength: typeof s.maxItems === 'number' ? s.maxItems : 3,
      });
    case 'object':
      return depth >= MAX_DEPTH && !s.required ? fc.constant({}) : objectOf(s, components, depth);
    default:
      return fc.constant(null);
  }
}
