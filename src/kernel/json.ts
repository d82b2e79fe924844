// JSON value types and safe parsing: keys that could reach an object prototype are refused.

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export class ForbiddenKeyError extends Error {
  constructor(readonly key: string) {
    super(`JSON key "${key}" is not allowed`);
  }
}

/** A JSON.parse reviver that throws on prototype-polluting keys. */
export function rejectForbiddenKeys(key: string, value: unknown): unknown {
  if (FORBIDDEN_KEYS.has(key)) throw new ForbiddenKeyError(key);
  return value;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
