// LSNs as X-Svc-Lsn carries them: PostgreSQL's text, compared as numbers.
import { expect } from 'chai';
import { formatLsn, parseLsn } from '../../src/db/readRouting.js';

describe('LSN text', () => {
  it('reads PostgreSQL LSNs as comparable numbers and writes them back', () => {
    expect(parseLsn('0/0')).to.equal(0n);
    expect(parseLsn('16/B374D848')).to.equal((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn(' 16/b374d848 ')).to.equal(parseLsn('16/B374D848'));
    expect(formatLsn(parseLsn('16/B374D848')!)).to.equal('16/B374D848');
    expect(formatLsn(parseLsn('FFFFFFFF/FFFFFFFF')!)).to.equal('FFFFFFFF/FFFFFFFF');
    // The high half weighs more than any low half (a string comparison would say otherwise).
    expect(parseLsn('2/0')! > parseLsn('1/FFFFFFFF')!).to.equal(true);
    expect(parseLsn('A/0')! > parseLsn('9/0')!).to.equal(true);
  });

  it('answers undefined for anything else', () => {
    for (const text of [undefined, '', '16', '16/', '/1', 'G/1', '1/2/3', '123456789/0', '1/0; drop', '-1/0'])
      expect(parseLsn(text), String(text)).to.equal(undefined);
  });
});
