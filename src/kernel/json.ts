// JSON value types, and what a client's JSON may not carry: nesting past the documented limit,
// keys that could reach an object prototype, text PostgreSQL cannot store.
import { BadRequestError, ValidationError, type ValidationIssue } from './errors.js';

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** How deep a client's JSON document may nest (docs/api.md); the outermost object or array is level 1. */
export const MAX_JSON_DEPTH = 100;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
/** Enough to show a client what is wrong without answering a list as long as its body. */
const MAX_TEXT_ISSUES = 20;
const NUL = /\u0000/;
/** A high surrogate without a low one after it, or a low one without a high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const NUL_ISSUE = { msg: 'String should not contain the NUL character (U+0000)', type: 'value_error' };
const SURROGATE_ISSUE = { msg: 'String should not contain a lone surrogate (U+D800 to U+DFFF without its pair)', type: 'value_error' };
const NON_FINITE_ISSUE = { msg: 'Number should be finite (a literal such as 1e999 parses to Infinity, which JSON cannot hold)', type: 'value_error' };

export class ForbiddenKeyError extends Error {
  constructor(readonly key: string) {
    super(`JSON key "${key}" is not allowed`);
  }
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One value met on a walk: the chain of parents gives its path, only built when an issue needs it. */
interface Visit {
  readonly value: unknown;
  /** Containers around this value (0 for the document itself). */
  readonly depth: number;
  readonly parent: Visit | undefined;
  readonly key: string | number | undefined;
}

export interface JsonFindings {
  /** A container deeper than the limit (the walk stopped there). */
  isTooDeep: boolean;
  /** The first prototype-reaching key met. */
  forbiddenKey: string | undefined;
  /** Strings and keys PostgreSQL text and jsonb cannot hold (NUL, lone surrogates), and numbers JSON cannot (1e999), as 422 issues. */
  unstorable: ValidationIssue[];
}

/**
 * Walks a parsed JSON value without recursion (its depth is what is being checked), values before
 * the values inside them and in document order.
 *
 * @example
 * inspectJson({ a: 'x\u0000' }, ['body']).unstorable; // [{ loc: ['body', 'a'], msg: 'String should not contain the NUL character (U+0000)', type: 'value_error' }]
 */
export function inspectJson(root: unknown, loc: readonly (string | number)[], maxDepth = Infinity): JsonFindings {
  const findings: JsonFindings = { isTooDeep: false, forbiddenKey: undefined, unstorable: [] };
  const pathOf = (visit: Visit, key?: string) => {
    const path: (string | number)[] = key === undefined ? [] : [key];
    for (let at: Visit | undefined = visit; at?.parent; at = at.parent) path.push(at.key!);
    return [...loc, ...path.reverse()];
  };
  const checkText = (text: string, visit: Visit, key?: string) => {
    if (findings.unstorable.length >= MAX_TEXT_ISSUES) return;
    if (NUL.test(text)) findings.unstorable.push({ loc: pathOf(visit, key), ...NUL_ISSUE });
    else if (LONE_SURROGATE.test(text)) findings.unstorable.push({ loc: pathOf(visit, key), ...SURROGATE_ISSUE });
  };
  const stack: Visit[] = [{ value: root, depth: 0, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value } = visit;
    if (typeof value === 'string') checkText(value, visit);
    if (typeof value === 'number' && !Number.isFinite(value) && findings.unstorable.length < MAX_TEXT_ISSUES) {
      findings.unstorable.push({ loc: pathOf(visit), ...NON_FINITE_ISSUE });
    }
    if (typeof value !== 'object' || value === null) continue;
    const depth = visit.depth + 1;
    if (depth > maxDepth) {
      findings.isTooDeep = true;
      return findings;
    }
    const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
    for (const [key] of entries) {
      if (typeof key !== 'string') continue;
      if (FORBIDDEN_KEYS.has(key)) findings.forbiddenKey ??= key;
      checkText(key, visit, key);
    }
    // Pushed last first, so that they come off the stack in document order.
    for (let i = entries.length - 1; i >= 0; i -= 1) stack.push({ value: entries[i]![1], depth, parent: visit, key: entries[i]![0] });
  }
  return findings;
}

/**
 * Refuses what a client's JSON (a request body, a gRPC payload, MCP tool arguments) may not carry:
 * nesting past MAX_JSON_DEPTH (BadRequestError), a prototype key (ForbiddenKeyError), text
 * PostgreSQL cannot store and numbers past JSON's range (ValidationError, 422 with each place under `location`).
 */
export function refuseUnsafeJson(value: unknown, location: string): void {
  const findings = inspectJson(value, [location], MAX_JSON_DEPTH);
  if (findings.isTooDeep) throw new BadRequestError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (findings.forbiddenKey !== undefined) throw new ForbiddenKeyError(findings.forbiddenKey);
  if (findings.unstorable.length > 0) throw new ValidationError(findings.unstorable);
}

/** Freezes a value and everything it holds (shared settings, claims shared by requests): nobody may change it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
