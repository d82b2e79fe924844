// RFC 8785 JSON Canonicalization (JCS) of JSON values: the text the audit hashes and signatures cover.

/**
 * JCS text of a JSON value: object keys sorted by UTF-16 code units (JavaScript's default sort),
 * numbers and strings as ECMAScript's JSON.stringify writes them, no whitespace. Equal to the
 * `canonicalize` package (test/kernel/jcs.unit.test.ts compares them); written here because that
 * package is ESM-only with no `require` export, which splits mocha's module graph in two, and
 * because the hot paths (append, verify) gain from skipping its per-character surrogate scan.
 */
export function jcs(value: unknown): string {
  if (value === null || typeof value !== 'object') return primitive(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return jcs((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : jcs(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  let text = '';
  for (const key of Object.keys(record).sort()) {
    const item = record[key];
    if (item === undefined) continue;
    text += `${text ? ',' : ''}${primitive(key)}:${jcs(item)}`;
  }
  return `{${text}}`;
}

/** In a `u` regular expression a pair is one code point, so only a lone surrogate is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u;

function primitive(value: unknown): string {
  if (typeof value === 'string') {
    const text = JSON.stringify(value);
    // JSON.stringify writes a lone surrogate as a \udxxx escape and nothing else that way, so only
    // a text holding "\ud" needs the exact (slower) test.
    if (text.includes('\\ud') && LONE_SURROGATE.test(value)) throw new RangeError('JCS has no lone surrogates');
    return text;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError(`JCS has no ${value}`);
  if (typeof value !== 'number' && typeof value !== 'boolean' && value !== null) throw new TypeError(`JCS has no ${typeof value}`);
  return JSON.stringify(value);
}
