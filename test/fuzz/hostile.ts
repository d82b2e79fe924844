// What an attacker sends instead of a valid request: hostile strings and JSON texts, bodies one
// mutation away from valid, and header values (Last-Event-ID, Idempotency-Key, traceparent) of garbage.
import fc from 'fast-check';

/** Strings that have broken parsers, databases, path joins and header writers before. */
export const HOSTILE_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ud83d',
  '\r\nSet-Cookie: x=1',
  'line\r\nInjected: yes',
  "' OR 1=1 --",
  "'; DROP TABLE events; --",
  '") OR ("1"="1',
  '$1',
  '%s%s%s%n',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/./../..',
  '%2e%2e%2f%2e%2e%2f',
  '%00',
  '%',
  '%E0%A4%A',
  '__proto__',
  'constructor',
  'prototype',
  '${SVC_SIGNING_KEY}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  '-1',
  '1e999',
  '99999999999999999999999999999999',
  '9223372036854775808',
  '0x7fffffff',
  '2026-02-30T25:61:61Z',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'a'.repeat(5000),
  '\u202e\u200b\ufeff',
  'ǅ\u0301\u0344',
];

export const HUGE_NUMBERS = [1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_SAFE_INTEGER - 2, 2 ** 63, 5e-324, -0, 2147483648, -2147483649];

export const hostileString = fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ unit: 'binary', maxLength: 40 }));

/** Any JSON value, hostile or odd (a string, a huge number, an array, an object with `__proto__`...). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom<unknown>(...HUGE_NUMBERS, true, false, null, [], {}, [null], { __proto__: null }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A body sent as is: raw text and its content type, for what JSON.stringify would never produce. */
export interface RawBody {
  raw: string;
  contentType: string;
}

/** JSON texts a parser or a validator may choke on (10k-deep nestings: FuzzBody's `deep`). */
export const HOSTILE_JSON_TEXTS: RawBody[] = [
  { raw: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', contentType: 'application/json' },
  { raw: '{"name":1e999,"values":[1e999,-1e999]}', contentType: 'application/json' },
  { raw: '{"name":123456789012345678901234567890,"n":-0.0000000000000000000000000001e-400}', contentType: 'application/json' },
  { raw: '{"name":"\\u0000\\ud800"}', contentType: 'application/json' },
  { raw: '{"a":1,"a":2}', contentType: 'application/json' },
  { raw: '{', contentType: 'application/json' },
  { raw: '', contentType: 'application/json' },
  { raw: 'null', contentType: 'application/json' },
  { raw: '"just a string"', contentType: 'application/json' },
  { raw: '\u0000\u0001\u0002', contentType: 'application/json' },
  { raw: 'a=1&a=2&__proto__[x]=1&b[c][d][e][f]=1', contentType: 'application/x-www-form-urlencoded' },
  { raw: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>', contentType: 'application/xml' },
  { raw: '{"name":"ok"}', contentType: 'text/plain' },
  { raw: '{"name":"ok"}', contentType: 'application/json; charset=utf-7' },
];

/** One change that makes a valid object invalid: a required key dropped, a value of the wrong kind, a key added. */
export function mutated(valid: unknown, required: string[]): fc.Arbitrary<unknown> {
  if (valid === null || typeof valid !== 'object' || Array.isArray(valid)) return hostileValue;
  const record = valid as Record<string, unknown>;
  const keys = Object.keys(record);
  const options: fc.Arbitrary<unknown>[] = [
    fc.tuple(fc.constantFrom('__proto__', 'constructor', 'id', 'tenant', 'extra'), hostileValue).map(([key, value]) => ({ ...record, [key]: value })),
    hostileValue,
  ];
  if (keys.length > 0) {
    options.push(fc.tuple(fc.constantFrom(...keys), hostileValue).map(([key, value]) => ({ ...record, [key]: value })));
  }
  const present = required.filter((key) => key in record);
  if (present.length > 0) {
    options.push(
      fc.constantFrom(...present).map((key) => {
        const copy = { ...record };
        delete copy[key];
        return copy;
      }),
    );
  }
  return fc.oneof(...options);
}

const TRACEPARENTS = [
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  '00-00000000000000000000000000000000-0000000000000000-01',
  '00-xyz',
  '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
  '',
];

/** Header values of garbage (only characters a header may carry: undici refuses CR, LF and NUL itself). */
const headerText = fc.oneof(
  fc.constantFrom('', ' ', '-1', '0', '1e999', '99999999999999999999999', 'abc', '%00', "'; --", '../..', 'x'.repeat(300), 'é'),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
);

/** Mostly absent (so a request also gets past the headers), else valid or garbage. */
const sometimes = (value: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> =>
  fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });

/** Optional headers: each one absent, or valid, or garbage. */
export const hostileHeaders: fc.Arbitrary<Record<string, string>> = fc
  .record({
    'last-event-id': sometimes(fc.oneof(headerText, fc.nat().map(String))),
    'idempotency-key': sometimes(fc.oneof(headerText, fc.uuid())),
    traceparent: sometimes(fc.oneof(fc.constantFrom(...TRACEPARENTS), headerText)),
    tracestate: sometimes(headerText),
    accept: sometimes(fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html', '', 'application/xml')),
    'content-encoding': sometimes(fc.constantFrom('gzip', 'identity', 'br', 'x-unknown')),
    'x-forwarded-for': sometimes(fc.constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1')),
  })
  .map((headers) => Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)));

/** Percent-encoding of any string's UTF-8 bytes (a lone surrogate is sent as U+FFFD; encodeURIComponent would throw). */
export function percentEncode(text: string): string {
  return Array.from(new TextEncoder().encode(text), (byte) =>
    /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) && byte < 0x80 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');
}
