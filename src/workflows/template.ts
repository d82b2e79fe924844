// Context templates: `{{ path }}` reads the run context; a value that is exactly one template keeps its JSON type.
import type { JsonObject, JsonValue } from '../kernel/json.js';

const WHOLE = /^\s*\{\{\s*([^{}]+?)\s*\}\}\s*$/;
const ANY = /\{\{\s*([^{}]+?)\s*\}\}/g;

/** Reads a dotted path (`ticket.labels.0`) from a JSON value; undefined when any part is missing. */
export function readPath(root: JsonValue | undefined, path: string): JsonValue | undefined {
  let current: JsonValue | undefined = root;
  for (const part of path.split('.')) {
    if (current === null || current === undefined || typeof current !== 'object') return undefined;
    if (part === '__proto__' || part === 'constructor' || part === 'prototype') return undefined;
    current = Array.isArray(current) ? current[Number(part)] : Object.prototype.hasOwnProperty.call(current, part) ? current[part] : undefined;
  }
  return current;
}

/** A mapping `{alias: path}` read from the context (a Response's `mapping`, a Workflow step's `input`); missing paths are null. */
export function mapPaths(mapping: Record<string, unknown>, context: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(mapping).map(([alias, path]) => [alias, readPath(context, String(path)) ?? null]));
}

export function render(value: unknown, context: JsonObject): JsonValue {
  if (typeof value === 'string') return renderString(value, context);
  if (Array.isArray(value)) return value.map((item) => render(item, context));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, render(item, context)]));
  }
  return (value ?? null) as JsonValue;
}

function renderString(text: string, context: JsonObject): JsonValue {
  const whole = WHOLE.exec(text);
  if (whole) return readPath(context, whole[1]!) ?? null;
  return text.replace(ANY, (_match, path: string) => {
    const found = readPath(context, path);
    if (found === undefined || found === null) return '';
    return typeof found === 'string' ? found : JSON.stringify(found);
  });
}

/** Every path a value's templates read (for validation). */
export function templatePaths(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(ANY)].map((m) => m[1]!.trim());
  if (Array.isArray(value)) return value.flatMap(templatePaths);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(templatePaths);
  return [];
}

/** Keys starting with `_` belong to the engine and never leave the server. */
export function publicView(context: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(context).filter(([key]) => !key.startsWith('_')));
}

export interface ContextChanges {
  set: JsonObject;
  unset: string[];
}

export function applyChanges(context: JsonObject, changes: ContextChanges): JsonObject {
  const next: JsonObject = { ...context, ...changes.set };
  for (const key of changes.unset) delete next[key];
  return next;
}

export function publicChanges(changes: ContextChanges): ContextChanges {
  return { set: publicView(changes.set), unset: changes.unset.filter((key) => !key.startsWith('_')) };
}
