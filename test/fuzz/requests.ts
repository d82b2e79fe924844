// One fast-check arbitrary of requests per OpenAPI operation: path parameters (known ids, random
// ones, hostile text), query strings, headers, a token, and a body that is valid, one mutation away
// from valid, or hostile.
import fc from 'fast-check';
import { HOSTILE_JSON_TEXTS, percentEncode, hostileHeaders, hostileString, hostileValue, mutated, type RawBody } from './hostile.js';
import { resolve, valueOf, type Components, type Schema } from './schemaArbitrary.js';
import { tokenKind, type TokenKind } from './tokens.js';

export interface Operation {
  path: string;
  method: string;
  op: Schema;
}

/** A body: JSON to stringify, form fields, raw text, or a 10k-deep nesting named (printing it would flood). */
export type FuzzBody = { json: unknown } | { form: Record<string, string> } | RawBody | { deep: 'array' | 'object' };

export interface FuzzRequest {
  method: string;
  /** Path and query string, percent-encoded as sent. */
  url: string;
  headers: Record<string, string>;
  token: TokenKind;
  body?: FuzzBody;
}

/** Path parameter values that name something existing, by parameter name (filled in by the test). */
export type KnownValues = Record<string, string[]>;

/** Raw path segments that are not valid percent-encoding, or walk up: sent unencoded. */
const RAW_SEGMENTS = ['%', '%zz', '%E0%A4%A', '..%2F..%2Fetc%2Fpasswd', '%2e%2e', '%00', '%0d%0aX:%20y'];

function pathValue(name: string, schema: Schema, known: KnownValues, components: Components): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [
    fc.uuid(),
    hostileString.filter((s) => s.length > 0).map(percentEncode),
    fc.constantFrom(...RAW_SEGMENTS),
    valueOf(schema, components)
      .map((v) => percentEncode(String(v)))
      .filter((s) => s.length > 0),
  ];
  const existing = known[name] ?? [];
  if (existing.length > 0) return fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...existing) }, ...options);
  return fc.oneof(...options);
}

function queryPart(name: string, schema: Schema, components: Components): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: valueOf(schema, components).map((v) => `${percentEncode(name)}=${percentEncode(String(v))}`) },
    { weight: 2, arbitrary: hostileString.map((v) => `${percentEncode(name)}=${percentEncode(v)}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(`${name}=1&${name}=2`, `${name}[]=1`, `${name}[a][b]=1`, `${name}=%`, `${name}`, `${name}=%00`),
    },
  );
}

function queryString(op: Schema, components: Components): fc.Arbitrary<string> {
  const params = ((op.parameters ?? []) as Schema[]).filter((p) => p.in === 'query');
  const parts = params.map((p) => queryPart(p.name as string, (p.schema ?? {}) as Schema, components));
  const extra = fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('__proto__[x]=1', 'constructor[prototype][x]=1', 'a[b][c][d][e][f][g]=1', 'wait=maybe', '%=%', 'q=' + 'x'.repeat(3000)),
    },
  );
  return fc.tuple(fc.tuple(...parts), extra).map(([values, more]) => {
    const all = [...values, more].filter((v): v is string => v !== undefined);
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
}

function formOf(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object') return { value: String(value) };
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

const hostileBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  fc.constantFrom<FuzzBody>(...HOSTILE_JSON_TEXTS, { deep: 'array' }, { deep: 'object' }),
  hostileValue.map((json) => ({ json })),
);

function bodyOf(op: Schema, components: Components): fc.Arbitrary<FuzzBody | undefined> {
  const content = (op.requestBody?.content ?? {}) as Record<string, Schema>;
  const [type] = Object.keys(content);
  if (type === undefined) return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: hostileBody });
  const schema = (content[type]!.schema ?? {}) as Schema;
  const required = ((resolve(schema, components).required as string[] | undefined) ?? []).slice();
  const valid = valueOf(schema, components);
  const wrap = type === 'application/x-www-form-urlencoded' ? (v: unknown): FuzzBody => ({ form: formOf(v) }) : (v: unknown): FuzzBody => ({ json: v });
  return fc.oneof(
    { weight: 4, arbitrary: valid.map(wrap) },
    { weight: 4, arbitrary: valid.chain((v) => mutated(v, required)).map(wrap) },
    { weight: 2, arbitrary: hostileBody },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** Every request this operation can be sent: its URL, headers, token and body. */
export function requestsFor({ path, method, op }: Operation, components: Components, known: KnownValues): fc.Arbitrary<FuzzRequest> {
  const pathParams = ((op.parameters ?? []) as Schema[]).filter((p) => p.in === 'path');
  const values = pathParams.map((p) => pathValue(p.name as string, (p.schema ?? {}) as Schema, known, components));
  return fc
    .record({
      params: fc.tuple(...values),
      query: queryString(op, components),
      headers: hostileHeaders,
      token: tokenKind,
      body: method === 'get' ? fc.constant(undefined) : bodyOf(op, components),
    })
    .map(({ params, query, headers, token, body }) => {
      let url = path;
      pathParams.forEach((p, i) => (url = url.replace(`{${p.name as string}}`, params[i]!)));
      return { method: method.toUpperCase(), url: url + query, headers, token, ...(body !== undefined ? { body } : {}) };
    });
}
