// The query string parser: express's "extended" one (qs), except that `__proto__` keys are kept as plain data.
import qs from 'qs';

const PROTO = '__proto__';
const STAND_IN = '\u0000svc-proto\u0000';

/**
 * qs drops every `__proto__` key, so `?filter[__proto__]=x` used to vanish and answer an unfiltered
 * list. Renamed before qs sees them and back afterwards, as own data properties (never the
 * prototype setter), such keys reach each route's validation like any other unknown name.
 */
export function parseQueryString(raw: string | null | undefined): Record<string, unknown> {
  let isRenamed = false;
  const parsed = qs.parse(raw ?? '', {
    allowPrototypes: true,
    decoder: (text, decode, charset, kind) => {
      const decoded = decode(text, decode, charset);
      if (kind !== 'key' || !decoded.includes(PROTO)) return decoded;
      isRenamed = true;
      return decoded.replaceAll(PROTO, STAND_IN);
    },
  });
  return isRenamed ? (restoreKeys(parsed) as Record<string, unknown>) : parsed;
}

function restoreKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(restoreKeys);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(copy, key.replaceAll(STAND_IN, PROTO), { value: restoreKeys(item), enumerable: true, writable: true, configurable: true });
  }
  return copy;
}
