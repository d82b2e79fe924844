// JCS: svc's canonicalization against the `canonicalize` package and RFC 8785's own examples.
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import { jcs } from '../../src/kernel/jcs.js';

const samples: unknown[] = [
  null,
  true,
  0,
  -0,
  1.0,
  1e2,
  1e21,
  1.5e-7,
  0.1 + 0.2,
  2 ** 53 + 2,
  Number.MAX_VALUE,
  5e-324,
  'plain',
  'quote " backslash \\ tab \t newline \n nul-ish \u001f del \u007f',
  'é ü 𝄞 \u2028 \u2029 😀',
  [],
  {},
  [1, 'two', { three: 3 }, [null]],
  { b: 1, a: 2, A: 3, '': 4, é: 5, '😀': 6, '\u00e9a': 7, ﬀ: 8, aa: { z: [1, { y: null, x: false }] } },
  { undefinedDropped: undefined, kept: 1, nested: [undefined] },
];

describe('JCS (RFC 8785)', () => {
  it('writes what the canonicalize package writes, for numbers, strings, key orders and nesting', () => {
    for (const sample of samples) expect(jcs(sample), JSON.stringify(sample)).to.equal(canonicalize(sample));
  });

  it("matches RFC 8785's sorting and number examples", () => {
    expect(
      jcs({
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      }),
    ).to.equal(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(jcs([333333333.33333329, 1e30, 4.5, 2e-3, 0.000000000000000000000000001])).to.equal('[333333333.3333333,1e+30,4.5,0.002,1e-27]');
  });

  it('refuses what JSON cannot carry: NaN, infinities, lone surrogates', () => {
    expect(() => jcs(NaN)).to.throw(RangeError);
    expect(() => jcs({ a: Infinity })).to.throw(RangeError);
    expect(() => jcs(['\ud800'])).to.throw(RangeError);
    expect(() => jcs({ ['\udc00']: 1 })).to.throw(RangeError);
    expect(() => jcs({ a: 'x\udbffy' })).to.throw(RangeError);
  });

  it('takes the text of an escaped surrogate (a backslash, then "ud800") for the text it is', () => {
    expect(jcs({ a: '\\ud800', b: '\ud83d\ude00' })).to.equal('{"a":"\\\\ud800","b":"\ud83d\ude00"}');
  });
});
