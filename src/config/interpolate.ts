// `${VAR}` and `${VAR:default}` in config documents (LLMs, federation), resolved from the environment read at start.
import { isJsonObject } from '../kernel/json.js';

/**
 * Resolves `${VAR}` and `${VAR:default}` in a config document's strings. Answers the names that were
 * unset (without a default), so the caller can skip the document.
 */
export function interpolateEnvironment<T>(value: T, environment: Readonly<Record<string, string>>): { value: T; missing: string[]; referenced: string[] } {
  const missing: string[] = [];
  const referenced: string[] = [];
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') {
      return item.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}/g, (_match, name: string, fallback: string | undefined) => {
        referenced.push(name);
        const found = environment[name];
        if (found !== undefined && found !== '') return found;
        if (fallback !== undefined) return fallback;
        missing.push(name);
        return '';
      });
    }
    if (Array.isArray(item)) return item.map(walk);
    if (isJsonObject(item)) return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    return item;
  };
  return { value: walk(value) as T, missing, referenced };
}
