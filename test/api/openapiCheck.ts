// Strict checks of an OpenAPI 3.1 document: swagger-parser, unique operation ids, declared path
// parameters, every schema compiling under strict Ajv 2020, and answers checked against their schemas.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export type Doc = Record<string, any>;

/** Every (path, method, operation) of the document. */
export function operationsOf(doc: Doc): { path: string; method: string; op: any }[] {
  return Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
  );
}

/** Replaces `#/components/schemas/X` with `components#/$defs/X` so schemas compile against one shared set. */
function toDefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toDefs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' ? item.replace('#/components/schemas/', 'components#/$defs/') : toDefs(item),
    ]),
  );
}

const compilers = new WeakMap<Doc, Ajv2020>();

/** A strict Ajv 2020 validator for a schema of the document (refs to components resolve). */
export function schemaValidator(doc: Doc, schema: unknown): ValidateFunction {
  let ajv = compilers.get(doc);
  if (!ajv) {
    ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ $id: 'components', $defs: toDefs(doc.components?.schemas ?? {}) });
    compilers.set(doc, ajv);
  }
  return ajv.compile(toDefs(schema) as object);
}

/** Throws unless the document passes swagger-parser (schema and spec) and the stricter checks below. */
export async function validateStrictly(doc: Doc): Promise<void> {
  // validate() dereferences in place: hand it a copy.
  await SwaggerParser.validate(structuredClone(doc) as never, { validate: { schema: true, spec: true } });
  expect(doc.openapi).to.match(/^3\.1\./);

  const ids = operationsOf(doc).map(({ op }) => op.operationId as string);
  expect(
    ids.every((id) => typeof id === 'string' && id.length > 0),
    'every operation has an operationId',
  ).to.equal(true);
  expect(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    'duplicate operationIds',
  ).to.deep.equal([]);

  for (const { path, method, op } of operationsOf(doc)) {
    const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
    const declared = (op.parameters ?? [])
      .filter((p: any) => p.in === 'path')
      .map((p: any) => p.name)
      .sort();
    expect(declared, `${method.toUpperCase()} ${path}: path parameters`).to.deep.equal(templated);
    expect(Object.keys(op.responses ?? {}), `${method.toUpperCase()} ${path}: responses`).to.not.be.empty;
    const schemas = [
      ...(op.parameters ?? []).map((p: any) => p.schema),
      ...Object.values(op.requestBody?.content ?? {}).map((c: any) => c.schema),
      ...Object.values(op.responses ?? {}).flatMap((r: any) => Object.values(r.content ?? {}).map((c: any) => c.schema)),
    ].filter((s) => s !== undefined);
    for (const schema of schemas) {
      expect(() => schemaValidator(doc, schema), `${method.toUpperCase()} ${path}: a schema does not compile strictly`).to.not.throw();
    }
  }
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    expect(() => schemaValidator(doc, schema), `components.schemas.${name} does not compile strictly`).to.not.throw();
  }
}

/** Asserts that a value matches a component schema of the document. */
export function expectMatches(doc: Doc, component: string, value: unknown): void {
  const validate = schemaValidator(doc, { $ref: `#/components/schemas/${component}` });
  expect(validate(value), `${JSON.stringify(value)} against ${component}: ${JSON.stringify(validate.errors)}`).to.equal(true);
}

/**
 * Whether a mounted express route (as an OpenAPI template) serves a documented path: literal
 * segments are equal, a documented `{param}` is the route's own, and a route parameter may stand
 * for a literal segment of the document (a dispatcher such as `/models/{model}` serving `/models/ticket/`).
 * Trailing slashes are ignored, as express (non-strict routing) ignores them.
 */
export function routeServes(mounted: string, documented: string): boolean {
  const route = mounted.replace(/\/+$/, '').split('/');
  const doc = documented.replace(/\/+$/, '').split('/');
  return route.length === doc.length && route.every((segment, i) => segment === doc[i] || (segment.startsWith('{') && !doc[i]!.startsWith('{')));
}
