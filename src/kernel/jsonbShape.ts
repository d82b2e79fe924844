// A JSON value as PostgreSQL's jsonb gives it back: what the append answers without reading the
// stored documents back over the wire (a projection applied inline then sees the same value, key
// order included, as a rebuild that reads the table).

/**
 * A deep copy of a JSON value in jsonb's shape: object keys ordered shorter first, then by their
 * UTF-8 bytes (jsonb's own order), members whose value is undefined dropped, `toJSON` applied,
 * undefined array items as null and -0 as 0, as a JSON text round trip through jsonb would give.
 * The value must be JSON-serialisable (the append's canonical form has already checked it).
 *
 * @example
 * JSON.stringify(asJsonb({ beta: 1, a: { zz: 2, y: 3 } })); // '{"a":{"y":3,"zz":2},"beta":1}'
 */
export function asJsonb(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'number' && value === 0 ? 0 : value;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return asJsonb((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : asJsonb(item)));
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of inJsonbOrder(Object.keys(record))) {
    const item = record[key];
    if (item === undefined || typeof item === 'function') continue;
    // An own "__proto__" member, as JSON.parse makes one, not a prototype change.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: asJsonb(item), enumerable: true, writable: true, configurable: true });
    else copy[key] = asJsonb(item);
  }
  return copy;
}

const ASCII = /^[\x00-\x7f]*$/;

/** The keys sorted as jsonb orders them; ASCII keys (nearly all) are told apart once, not in every comparison. */
function inJsonbOrder(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  return keys.every((key) => ASCII.test(key)) ? keys.sort(compareAsciiKeys) : keys.sort(compareJsonbKeys);
}

function compareAsciiKeys(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** jsonb's key order: byte length first, then the bytes (UTF-8 byte order is code point order). */
function compareJsonbKeys(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const bytesA = Buffer.from(a, 'utf8');
  const bytesB = Buffer.from(b, 'utf8');
  return bytesA.length - bytesB.length || Buffer.compare(bytesA, bytesB);
}
