// The envelope of a personal value: round trip, tampering refused, blind indexes keyed.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { DataIntegrityError } from '../../src/kernel/errors.js';
import { blindIndexOf, isEnvelope, openValue, parseEnvelope, pooledRandomBytes, sealValue, unwrapKey, wrapKey } from '../../src/privacy/envelope.js';

describe('privacy envelope', () => {
  const key = randomBytes(32);
  const keyId = randomUUID();

  it('seals a value into enc:v1:<key id>:<nonce>:<ciphertext>:<tag> and opens it again', () => {
    const sealed = sealValue(key, keyId, 'ada@example.com');
    expect(sealed).to.match(new RegExp(`^enc:v1:${keyId}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$`));
    expect(sealed).not.to.contain('ada');
    expect(isEnvelope(sealed)).to.equal(true);
    expect(openValue(key, parseEnvelope(sealed))).to.equal('ada@example.com');
  });

  it('uses a fresh nonce every time', () => {
    expect(sealValue(key, keyId, 'same')).not.to.equal(sealValue(key, keyId, 'same'));
  });

  it('draws nonces from a pool whose answers never change, never repeat, and come in any size', () => {
    const first = pooledRandomBytes(12);
    const kept = Buffer.from(first);
    // Several refills of the 4 KiB pool later, what was handed out is what it was.
    const drawn = Array.from({ length: 2000 }, () => pooledRandomBytes(32).toString('hex'));
    expect(first.equals(kept)).to.equal(true);
    expect(new Set(drawn).size).to.equal(drawn.length);
    expect(drawn.every((hex) => hex.length === 64)).to.equal(true);
    expect(pooledRandomBytes(10_000).length).to.equal(10_000);
  });

  it('refuses a tampered ciphertext, a tampered tag, another key id and another key with a DataIntegrityError', () => {
    const sealed = sealValue(key, keyId, 'ada@example.com');
    const [prefix, version, id, nonce, ciphertext, tag] = sealed.split(':') as [string, string, string, string, string, string];
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] = flipped[0]! ^ 1;
    const variants = [
      [prefix, version, id, nonce, flipped.toString('base64url'), tag].join(':'),
      [prefix, version, id, nonce, ciphertext, Buffer.alloc(16).toString('base64url')].join(':'),
      [prefix, version, randomUUID(), nonce, ciphertext, tag].join(':'),
    ];
    for (const variant of variants) expect(() => openValue(key, parseEnvelope(variant))).to.throw(DataIntegrityError, /does not authenticate/);
    expect(() => openValue(randomBytes(32), parseEnvelope(sealed))).to.throw(DataIntegrityError);
    expect(() => parseEnvelope('enc:v1:garbage')).to.throw(DataIntegrityError, /well-formed/);
  });

  it('wraps a data key with a KEK', () => {
    const kek = randomBytes(32);
    const wrapped = wrapKey(kek, keyId, key);
    expect(unwrapKey(kek, keyId, wrapped).equals(key)).to.equal(true);
    expect(() => unwrapKey(kek, randomUUID(), wrapped)).to.throw(DataIntegrityError);
  });

  it('keys the blind index: the same value and key match, another key or purpose does not', () => {
    const index = blindIndexOf(key, 'email', 'ada@example.com');
    expect(index).to.match(/^[0-9a-f]{64}$/);
    expect(blindIndexOf(key, 'email', 'ada@example.com')).to.equal(index);
    expect(blindIndexOf(randomBytes(32), 'email', 'ada@example.com')).not.to.equal(index);
    expect(blindIndexOf(key, 'phone', 'ada@example.com')).not.to.equal(index);
  });
});
