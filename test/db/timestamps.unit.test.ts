// timestamptz values leave the database in one shape: the ISO 8601 form Date.toISOString() gives.
import { expect } from 'chai';
import { isoFromPgTimestamptz } from '../../src/db/pool.js';

describe('isoFromPgTimestamptz', () => {
  it('pads the fraction PostgreSQL trims to milliseconds', () => {
    expect(isoFromPgTimestamptz('2026-11-22 05:17:28.05+00')).to.equal('2026-11-22T05:17:28.050Z');
    expect(isoFromPgTimestamptz('2026-11-22 05:17:28.5+00')).to.equal('2026-11-22T05:17:28.500Z');
    expect(isoFromPgTimestamptz('2026-11-22 05:17:28+00')).to.equal('2026-11-22T05:17:28.000Z');
  });

  it('keeps microseconds when the value has them', () => {
    expect(isoFromPgTimestamptz('2026-11-22 05:17:28.123456+00')).to.equal('2026-11-22T05:17:28.123456Z');
    expect(isoFromPgTimestamptz('2026-11-22 05:17:28.1234+00')).to.equal('2026-11-22T05:17:28.123400Z');
  });

  it('agrees with Date.toISOString for every millisecond value', () => {
    for (let ms = 0; ms < 1000; ms++) {
      const date = new Date(Date.UTC(2026, 10, 22, 5, 17, 28, ms));
      const trimmed = date
        .toISOString()
        .replace('T', ' ')
        .replace(/\.?0*Z$/, '+00');
      expect(isoFromPgTimestamptz(trimmed)).to.equal(date.toISOString());
    }
  });

  it('passes infinity through', () => {
    expect(isoFromPgTimestamptz('infinity')).to.equal('infinity');
  });
});
