// chainHash writes into a reused buffer for speed; it must give exactly SHA-256(previous bytes || UTF-8 text).
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { chainHash, ZERO_HASH } from '../../src/eventstore/canonical.js';

function plainChainHash(previousHex: string, text: string): string {
  return createHash('sha256').update(Buffer.from(previousHex, 'hex')).update(text, 'utf8').digest('hex');
}

describe('event store: chainHash', () => {
  it('is SHA-256 over the previous hash and the text, for texts of every size and script', () => {
    const previous = createHash('sha256').update('previous').digest('hex');
    const texts = ['', 'abc', 'é😀€', 'x'.repeat(70_000), '😀'.repeat(50_000), 'y'.repeat(300_000), 'z'];
    for (const text of texts) expect(chainHash(previous, text), `${text.length} units`).to.equal(plainChainHash(previous, text));
    expect(chainHash(ZERO_HASH, 'a')).to.equal(plainChainHash(ZERO_HASH, 'a'));
  });

  it('agrees with the plain definition on arbitrary text, one link after another', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 300 }), { maxLength: 20 }), (texts) => {
        let fast = ZERO_HASH;
        let plain = ZERO_HASH;
        for (const text of texts) {
          fast = chainHash(fast, text);
          plain = plainChainHash(plain, text);
        }
        expect(fast).to.equal(plain);
      }),
      { numRuns: 200 },
    );
  });
});
