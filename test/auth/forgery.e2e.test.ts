// Forged and malformed bearer tokens: every one a 401 with WWW-Authenticate, and the service keeps serving.
import { createHmac, createPublicKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { generateSigningKeyHex, privateKeyFromHex } from '../../src/iam/keys.js';
import { TOKEN_ISSUER } from '../../src/iam/tokens.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectUnauthenticated, login, payloadOf, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A JWS built by hand, so headers jose would refuse to produce (crit, jku, ...) can be sent. */
function signEd25519(header: Record<string, unknown>, payload: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString('base64url')}`;
}

function signHs256(header: Record<string, unknown>, payload: Record<string, unknown>, secret: Buffer | string): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/**
 * The same signature bytes spelled differently: an Ed25519 signature is 64 bytes, 86 base64url
 * characters, and the low 4 bits of the last one carry nothing.
 */
function respellSignature(token: string): string {
  const last = token.at(-1)!;
  const index = BASE64URL_ALPHABET.indexOf(last);
  const respelled = BASE64URL_ALPHABET[(index & 0b110000) | ((index & 0b1111) ^ 0b0101)]!;
  expect(Buffer.from(token.split('.')[2]!, 'base64url')).to.have.length(64);
  return `${token.slice(0, -1)}${respelled}`;
}

describe('forged and malformed tokens', () => {
  const signingKeyHex = generateSigningKeyHex();
  const realKey = privateKeyFromHex(signingKeyHex);
  const otherKey = generateKeyPairSync('ed25519').privateKey;
  let service: Service;
  let admin: Admin;
  let kid: string;
  let publicX: string;

  const header = (extra: Record<string, unknown> = {}) => ({ alg: 'EdDSA', kid, typ: 'JWT', ...extra });
  /** Claims the service itself would mint for the admin. */
  function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    const nowMs = Date.now();
    const base: Record<string, unknown> = {
      iss: TOKEN_ISSUER,
      sub: admin.userId,
      groups: ['superadmin'],
      scopes: ['iam:admin'],
      iat: nowMs / 1000,
      exp: Math.floor(nowMs / 1000) + 3600,
      jti: randomUUID(),
    };
    for (const [name, value] of Object.entries(overrides)) {
      if (value === undefined) delete base[name];
      else base[name] = value;
    }
    return base;
  }
  const me = (token: string) => call(service.url, 'GET', '/auth/me', { token });
  const adminUsers = (token: string) => call(service.url, 'GET', '/auth/admin/users', { token });

  async function expectRefused(token: string, detail?: RegExp): Promise<void> {
    expectUnauthenticated(await me(token), detail);
    expectUnauthenticated(await adminUsers(token), detail);
  }

  before(async () => {
    service = await startTestService({ env: { SVC_SIGNING_KEY: signingKeyHex } });
    admin = await bootstrapAdmin(service.url);
    const jwks = await call(service.url, 'GET', '/auth/jwks.json');
    kid = jwks.body.keys[0].kid;
    publicX = jwks.body.keys[0].x;
  });
  after(async () => {
    await service?.close();
  });

  it('accepts the hand-signed control token (so each refusal below is for its defect)', async () => {
    const control = signEd25519(header(), claims(), realKey);
    const answer = await me(control);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.user_id).to.equal(admin.userId);
    expect((await adminUsers(control)).status).to.equal(200);
    const viaJose = await new SignJWT(claims()).setProtectedHeader({ alg: 'EdDSA', kid }).sign(realKey);
    expect((await me(viaJose)).status).to.equal(200);
  });

  it('refuses a wrong number of segments', async () => {
    const good = signEd25519(header(), claims(), realKey);
    const [h, p, s] = good.split('.');
    for (const token of [`${h}.${p}`, `${h}`, `${good}.${s}`, `${h}.${p}.${s}.`, `..`]) await expectRefused(token);
  });

  it('refuses segments that are not base64url JSON', async () => {
    const good = signEd25519(header(), claims(), realKey);
    const [h, p, s] = good.split('.');
    for (const token of ['!!!.@@@.###', `${h}.$$$.${s}`, `%%%.${p}.${s}`, `${h}.${b64url('not json')}.${s}`, `${b64url('[1]')}.${p}.${s}`]) {
      await expectRefused(token);
    }
  });

  it('refuses alg none, whatever its spelling', async () => {
    for (const alg of ['none', 'None', 'NONE']) {
      await expectRefused(`${b64url({ alg, typ: 'JWT' })}.${b64url(claims())}.`, /algorithm/);
      await expectRefused(`${b64url({ alg, kid })}.${b64url(claims())}.${b64url('x')}`, /algorithm/);
    }
  });

  it('refuses HS256 signed with the public key bytes as HMAC secret', async () => {
    const raw = Buffer.from(publicX, 'base64url');
    const pem = String(createPublicKey(realKey).export({ type: 'spki', format: 'pem' }));
    for (const secret of [raw, publicX, pem]) {
      await expectRefused(signHs256({ alg: 'HS256', kid, typ: 'JWT' }, claims(), secret), /algorithm/);
      await expectRefused(signHs256({ alg: 'HS256', typ: 'JWT' }, claims(), secret), /algorithm/);
    }
    const viaJose = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid }).sign(new Uint8Array(raw));
    await expectRefused(viaJose);
  });

  it('refuses a token signed by another Ed25519 key, with or without the real kid', async () => {
    await expectRefused(signEd25519(header(), claims(), otherKey), /signature/);
    await expectRefused(signEd25519({ alg: 'EdDSA', typ: 'JWT' }, claims(), otherKey), /signature/);
    await expectRefused(await new SignJWT(claims()).setProtectedHeader({ alg: 'EdDSA', kid: 'attacker' }).sign(otherKey));
  });

  it('refuses an algorithm other than EdDSA even with a valid Ed25519 signature', async () => {
    await expectRefused(signEd25519(header({ alg: 'Ed25519' }), claims(), realKey), /algorithm/);
  });

  it('refuses an unknown crit header', async () => {
    await expectRefused(signEd25519(header({ crit: ['x-policy'], 'x-policy': 'ignore-me' }), claims(), realKey), /crit/);
    await expectRefused(signEd25519(header({ crit: ['exp'] }), claims(), realKey), /crit/);
  });

  it('refuses jku, jwk and x5u headers, also when the embedded key made the signature', async () => {
    const attackerJwk = createPublicKey(otherKey).export({ format: 'jwk' });
    for (const [extra, key] of [
      [{ jku: 'https://attacker.example/jwks.json' }, realKey],
      [{ jku: `${service.url}/auth/jwks.json` }, realKey],
      [{ x5u: 'https://attacker.example/cert.pem' }, realKey],
      [{ jwk: attackerJwk }, realKey],
      [{ jwk: attackerJwk }, otherKey],
      [{ jwk: attackerJwk, kid: undefined }, otherKey],
    ] as [Record<string, unknown>, KeyObject][]) {
      await expectRefused(signEd25519(header(extra), claims(), key), /jku|x5u|jwk/);
    }
  });

  for (const claim of ['iat', 'sub', 'exp', 'jti', 'iss']) {
    it(`refuses a correctly signed token without ${claim}`, async () => {
      await expectRefused(signEd25519(header(), claims({ [claim]: undefined }), realKey), new RegExp(`"${claim}"`));
    });
  }

  it('refuses empty or non-string sub and jti', async () => {
    for (const overrides of [{ sub: '' }, { sub: 42 }, { jti: 7 }, { iat: '1700000000' }]) {
      await expectRefused(signEd25519(header(), claims(overrides), realKey));
    }
  });

  it('refuses an iat in the future', async () => {
    const later = Date.now() / 1000 + 600;
    await expectRefused(signEd25519(header(), claims({ iat: later, exp: Math.floor(later) + 3600 }), realKey), /future/);
  });

  it('refuses a wrong issuer', async () => {
    for (const iss of ['evil', 'SVC', `${TOKEN_ISSUER} `, '']) await expectRefused(signEd25519(header(), claims({ iss }), realKey), /iss/);
  });

  it('refuses an expired token', async () => {
    const earlier = Date.now() / 1000 - 7200;
    await expectRefused(signEd25519(header(), claims({ iat: earlier, exp: Math.floor(earlier) + 3600 }), realKey), /expired/);
  });

  it('refuses groups or scopes that are not lists of names matching the pattern', async () => {
    for (const overrides of [
      { groups: 'superadmin' },
      { groups: { 0: 'superadmin' } },
      { groups: [1] },
      { groups: ['bad name'] },
      { scopes: 'iam:admin' },
      { scopes: ['iam:admin', 'no spaces'] },
      { scopes: ['iam:admin', ''] },
      { scopes: undefined },
      { groups: undefined },
    ]) {
      await expectRefused(signEd25519(header(), claims(overrides), realKey), /groups or scopes/);
    }
  });

  it('refuses a revoked token also under another spelling of its signature', async () => {
    const token = await login(service.url, admin.email, admin.password);
    const respelled = respellSignature(token);
    expect(respelled).to.not.equal(token);
    // The other spelling verifies while the token lives, so the refusal below is the revocation's doing.
    expect((await me(respelled)).status).to.equal(200);
    expect((await client(service.url, token).post('/auth/logout')).status).to.equal(204);
    await expectRefused(token, /revoked/);
    await expectRefused(respelled, /revoked/);
    expectUnauthenticated(await client(service.url, respelled).post('/auth/refresh'));
    expect(payloadOf(respelled).jti).to.equal(payloadOf(token).jti);
  });

  it('keeps serving after all of the above', async () => {
    expect((await call(service.url, 'GET', '/health')).status).to.equal(200);
    expect((await me(admin.token)).status).to.equal(200);
  });
});
