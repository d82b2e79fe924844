// ASVS 5.0 V11 Cryptography, the gaps the other tests leave: AES-GCM nonces never repeat under one key,
// malformed Ed25519 signing keys are refused, the OAuth login secrets carry at least 128 random bits,
// and src/ uses no MD5 or SHA-1. Tampering, `alg: none` and HS256-with-the-public-key are proven in
// test/privacy/envelope.unit and test/auth/forgery.e2e.
import { randomBytes, randomUUID, sign, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { newLoginSecrets } from '../../src/federation/oauth.js';
import { generateSigningKeyHex, loadSigningKeys, privateKeyFromHex } from '../../src/iam/keys.js';
import { parseEnvelope, sealValue, unwrapKey, wrapKey } from '../../src/privacy/envelope.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

describe('ASVS V11 Cryptography', () => {
  it('V11.3.4 AES-256-GCM never uses a nonce twice under one key: 10 000 seals of the same value, 1 000 key wraps', () => {
    const key = randomBytes(32);
    const keyId = randomUUID();
    const nonces = new Set<string>();
    for (let i = 0; i < 10_000; i += 1) nonces.add(parseEnvelope(sealValue(key, keyId, 'same value')).nonce.toString('hex'));
    expect(nonces.size).to.equal(10_000);
    const wrapNonces = new Set<string>();
    const dataKey = randomBytes(32);
    for (let i = 0; i < 1000; i += 1) {
      const wrapped = wrapKey(key, keyId, dataKey);
      wrapNonces.add(wrapped.split('.')[0]!);
      if (i === 0) expect(unwrapKey(key, keyId, wrapped).equals(dataKey)).to.equal(true);
    }
    expect(wrapNonces.size).to.equal(1000);
  });

  it('V11.6.1 a malformed Ed25519 signing key is refused, never used: too short, too long, not hex', () => {
    const good = generateSigningKeyHex();
    expect(good).to.match(/^[0-9a-f]{64}$/);
    for (const bad of [good.slice(0, 62), `${good}00`, 'zz'.repeat(32), '', good.slice(0, 63)]) {
      expect(() => privateKeyFromHex(bad), JSON.stringify(bad)).to.throw();
    }
  });

  it('V11.6.1 V11.2.3 the signing key is Ed25519 (128-bit security): what it signs verifies with the published key, and nothing else does', async () => {
    const keys = await loadSigningKeys(generateSigningKeyHex());
    expect(keys.privateKey.asymmetricKeyType).to.equal('ed25519');
    expect(keys.jwks.keys[0]).to.include({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    const message = Buffer.from('a checkpoint');
    const signature = sign(null, message, keys.privateKey);
    expect(verify(null, message, keys.publicKey, signature)).to.equal(true);
    const other = await loadSigningKeys(generateSigningKeyHex());
    expect(verify(null, message, other.publicKey, signature)).to.equal(false);
  });

  it('V11.5.1 the OAuth state, nonce and PKCE verifier carry at least 128 random bits and never repeat', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) {
      const { state, nonce, codeVerifier } = await newLoginSecrets();
      for (const value of [state, nonce, codeVerifier]) {
        // base64url: 6 bits a character; 22 characters hold 132 bits.
        expect(value).to.match(/^[A-Za-z0-9_-]{22,}$/);
        expect(seen.has(value)).to.equal(false);
        seen.add(value);
      }
    }
  });

  it('V11.4.1 src/ uses no MD5 or SHA-1 and no cipher but AES-256-GCM', () => {
    const found: string[] = [];
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    for (const file of files) {
      const text = readFileSync(path.join(SRC, file), 'utf8');
      if (/createHash\(\s*['"](md5|sha1|md4|ripemd)/i.test(text)) found.push(`${file}: a weak hash`);
      for (const [, cipher] of text.matchAll(/createCipheriv\(\s*['"]([^'"]+)['"]/g)) if (cipher !== 'aes-256-gcm') found.push(`${file}: ${cipher}`);
    }
    expect(files.length).to.be.greaterThan(100);
    expect(found).to.deep.equal([]);
  });
});
