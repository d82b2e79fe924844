// JSON Schema validation (ajv, compiled once) with errors in the 422 `detail` shape: {loc, msg, type}.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ValidationError, type ValidationIssue } from './errors.js';

// ajv-formats is CommonJS; under NodeNext its callable sits on `default`.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export const ajv = new Ajv({ allErrors: true, strict: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);
/** For inputs that arrive as query-string text (GET triggers): "3" is read as the integer 3. */
const coercingAjv = new Ajv({ allErrors: true, strict: true, coerceTypes: true, useDefaults: false });
addFormats(coercingAjv);

export type Location = 'body' | 'query' | 'path';

export interface Validator<T> {
  (value: unknown): value is T;
  issues(value: unknown): ValidationIssue[];
  /** Answers the value typed, or throws a ValidationError (422). */
  parse(value: unknown): T;
}

/** Compiles once; `location` prefixes every `loc` (FastAPI-style, e.g. ['body', 'email']). */
export function compileValidator<T>(schema: object, location: Location = 'body', options: { coerceText?: boolean } = {}): Validator<T> {
  const validate: ValidateFunction = (options.coerceText ? coercingAjv : ajv).compile(schema);
  const issues = (value: unknown): ValidationIssue[] => (validate(value) ? [] : (validate.errors ?? []).map((e) => toIssue(e, location)));
  const check = ((value: unknown) => validate(value)) as Validator<T>;
  check.issues = issues;
  check.parse = (value: unknown): T => {
    const found = issues(value);
    if (found.length > 0) throw new ValidationError(dedupe(found));
    return value as T;
  };
  return check;
}

const TYPE_ISSUES: Record<string, { type: string; msg: string }> = {
  string: { type: 'string_type', msg: 'Input should be a valid string' },
  integer: { type: 'int_type', msg: 'Input should be a valid integer' },
  number: { type: 'float_type', msg: 'Input should be a valid number' },
  boolean: { type: 'bool_type', msg: 'Input should be a valid boolean' },
  object: { type: 'dict_type', msg: 'Input should be a valid dictionary' },
  array: { type: 'list_type', msg: 'Input should be a valid list' },
  null: { type: 'none_required', msg: 'Input should be None' },
};

const FORMAT_ISSUES: Record<string, { type: string; msg: string }> = {
  uuid: { type: 'uuid_parsing', msg: 'Input should be a valid UUID' },
  date: { type: 'date_parsing', msg: 'Input should be a valid date' },
  'date-time': { type: 'datetime_parsing', msg: 'Input should be a valid datetime' },
  email: { type: 'value_error', msg: 'value is not a valid email address' },
  uri: { type: 'url_parsing', msg: 'Input should be a valid URL' },
};

function toIssue(error: ErrorObject, location: Location): ValidationIssue {
  const path = pointerToPath(error.instancePath);
  const loc = [location, ...path];
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { loc: [...loc, String(params.missingProperty)], msg: 'Field required', type: 'missing' };
    case 'additionalProperties':
      return { loc: [...loc, String(params.additionalProperty)], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' };
    case 'type': {
      const expected = String(Array.isArray(params.type) ? params.type[0] : params.type);
      return { loc, ...(TYPE_ISSUES[expected] ?? { type: `${expected}_type`, msg: `Input should be of type ${expected}` }) };
    }
    case 'format':
      return { loc, ...(FORMAT_ISSUES[String(params.format)] ?? { type: 'value_error', msg: `Input should match format ${params.format}` }) };
    case 'enum':
      return { loc, type: 'enum', msg: `Input should be ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'const':
      return { loc, type: 'literal_error', msg: `Input should be ${JSON.stringify(params.allowedValue)}` };
    case 'minLength':
      return { loc, type: 'string_too_short', msg: `String should have at least ${params.limit} characters` };
    case 'maxLength':
      return { loc, type: 'string_too_long', msg: `String should have at most ${params.limit} characters` };
    case 'pattern':
      return { loc, type: 'string_pattern_mismatch', msg: `String should match pattern '${params.pattern}'` };
    case 'minimum':
      return { loc, type: 'greater_than_equal', msg: `Input should be greater than or equal to ${params.limit}` };
    case 'maximum':
      return { loc, type: 'less_than_equal', msg: `Input should be less than or equal to ${params.limit}` };
    case 'minItems':
      return { loc, type: 'too_short', msg: `List should have at least ${params.limit} items` };
    case 'maxItems':
      return { loc, type: 'too_long', msg: `List should have at most ${params.limit} items` };
    case 'minProperties':
      return { loc, type: 'too_short', msg: `Object should have at least ${params.limit} fields` };
    default:
      return { loc, type: 'value_error', msg: error.message ?? 'Invalid value' };
  }
}

function pointerToPath(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = JSON.stringify([issue.loc, issue.type]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** An integer query parameter within bounds (`limit`, `offset`); absent gives the fallback. */
export function integerParam(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const fail = (type: string, msg: string) => new ValidationError([{ loc: ['query', name], msg, type }]);
  if (typeof value !== 'string' || !/^-?\d{1,15}$/.test(value)) throw fail('int_parsing', 'Input should be a valid integer');
  const parsed = Number(value);
  if (parsed < min) throw fail('greater_than_equal', `Input should be greater than or equal to ${min}`);
  if (parsed > max) throw fail('less_than_equal', `Input should be less than or equal to ${max}`);
  return parsed;
}
