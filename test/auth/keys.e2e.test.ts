// The signing key: the kid is the RFC 7638 thumbprint, the ephemeral dev key dies with its process, the legacy variable still works.
import { spawn } from 'node:child_process';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { once } from 'node:events';
import { expect } from 'chai';
import { calculateJwkThumbprint, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { TOKEN_ISSUER } from '../../src/iam/tokens.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, client, eventually, expectUnauthenticated, login, type HttpResult } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { CLI_ENTRY } from '../support/serviceProcess.js';

const DEV_ENV = { SVC_DEV_MODE: 'true', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: 'ABCD-EFGH-IJKL-MNOP' };

/** The public key of a 64-hex-character Ed25519 seed, derived here (PKCS#8 DER: a fixed prefix, then the seed). */
function publicKeyOfSeed(hex: string): KeyObject {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(hex, 'hex')]);
  return createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
}

async function publishedKey(url: string): Promise<JWK & { kid: string; x: string }> {
  const jwks = await call(url, 'GET', '/auth/jwks.json');
  expect(jwks.status).to.equal(200);
  expect(jwks.body.keys).to.have.length(1);
  return jwks.body.keys[0];
}

/** The RFC 7638 thumbprint of the public members only, whatever else the published JWK carries. */
function thumbprintOf(key: JWK): Promise<string> {
  return calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x } as JWK, 'sha256');
}

describe('signing keys', function () {
  this.timeout(60_000);
  const services: Service[] = [];
  const start = async (databaseUrl: string, env: Record<string, string>) => {
    const service = await startTestService({ databaseUrl, env });
    services.push(service);
    return service;
  };
  const stop = async (service: Service) => {
    services.splice(services.indexOf(service), 1);
    await service.close();
  };
  after(async () => {
    await Promise.all(services.map((s) => s.close()));
  });

  it('names the key by its RFC 7638 thumbprint, in the key set and in the header of every token', async () => {
    const seed = generateSigningKeyHex();
    const configured = await start(await createTestDatabase(), { SVC_SIGNING_KEY: seed });
    const ephemeral = await start(await createTestDatabase(), DEV_ENV);
    for (const service of [configured, ephemeral]) {
      const key = await publishedKey(service.url);
      expect(key.kid).to.equal(await thumbprintOf(key));
      const admin = await bootstrapAdmin(service.url);
      const fromLogin = await login(service.url, admin.email, admin.password);
      const refreshed = await client(service.url, fromLogin).post('/auth/refresh');
      expect(refreshed.status).to.equal(200);
      for (const token of [admin.token, fromLogin, refreshed.body.access_token as string]) {
        expect(decodeProtectedHeader(token)).to.include({ alg: 'EdDSA', kid: key.kid });
      }
    }
    // The configured key is the one published, and the two services do not share a kid.
    const configuredKey = await publishedKey(configured.url);
    expect(configuredKey.x).to.equal(publicKeyOfSeed(seed).export({ format: 'jwk' }).x);
    expect(configuredKey.kid).to.not.equal((await publishedKey(ephemeral.url)).kid);
  });

  it('in dev mode without SVC_SIGNING_KEY refuses after a restart the tokens minted before it', async () => {
    const databaseUrl = await createTestDatabase();
    const first = await start(databaseUrl, DEV_ENV);
    const admin = await bootstrapAdmin(first.url);
    const before = await login(first.url, admin.email, admin.password);
    expect((await call(first.url, 'GET', '/auth/me', { token: before })).status).to.equal(200);
    const firstKid = (await publishedKey(first.url)).kid;
    await stop(first);

    const second = await start(databaseUrl, DEV_ENV);
    for (const token of [admin.token, before]) {
      expectUnauthenticated(await call(second.url, 'GET', '/auth/me', { token }));
      expectUnauthenticated(await call(second.url, 'POST', '/auth/refresh', { token }));
    }
    expect((await publishedKey(second.url)).kid).to.not.equal(firstKid);
    // The account survived the restart; only the key did not.
    const after = await login(second.url, admin.email, admin.password);
    expect((await call(second.url, 'GET', '/auth/me', { token: after })).body.user_id).to.equal(admin.userId);

    // With SVC_SIGNING_KEY set, the same restart keeps tokens valid.
    const env = { ...DEV_ENV, SVC_SIGNING_KEY: generateSigningKeyHex() };
    await stop(second);
    const keyed = await start(databaseUrl, env);
    const kept = await login(keyed.url, admin.email, admin.password);
    await stop(keyed);
    const restarted = await start(databaseUrl, env);
    expect((await call(restarted.url, 'GET', '/auth/me', { token: kept })).status).to.equal(200);
  });

  it('signs with the legacy SVC_BISCUIT_PRIVATE_KEY, and `svc serve` logs a warning about it', async () => {
    const seed = generateSigningKeyHex();
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: await createTestDatabase(),
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_LOG_LEVEL: 'info',
      // Production refuses to start without a key: the legacy name must count as one.
      SVC_ENV: 'production',
      SVC_BISCUIT_PRIVATE_KEY: seed,
    };
    const child = spawn(process.execPath, [CLI_ENTRY, 'serve'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = once(child, 'exit');
    const logLines = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level: number; msg: string; url?: string });
    try {
      let url: string | undefined;
      const up = await eventually(
        async () => {
          url = logLines().find((l) => l.msg === 'svc listening')?.url;
          return url !== undefined || child.exitCode !== null;
        },
        30_000,
        50,
      );
      expect(up.ok && url !== undefined, `no "svc listening" log:\n${output}`).to.equal(true);

      const warnings = logLines()
        .filter((l) => l.level === 40)
        .map((l) => l.msg);
      expect(warnings, output).to.include('SVC_BISCUIT_PRIVATE_KEY is deprecated: rename it to SVC_SIGNING_KEY');
      expect(warnings.join('\n'), 'the legacy key is not ignored in favour of an ephemeral one').to.not.match(/ephemeral/);

      const publicKey = publicKeyOfSeed(seed);
      const key = await publishedKey(url!);
      expect(key.x).to.equal(publicKey.export({ format: 'jwk' }).x);
      expect(key.kid).to.equal(await thumbprintOf(key));
      const bootstrap: HttpResult = await call(url!, 'POST', '/auth/bootstrap', { json: { email: 'legacy@example.com', password: 'legacy-password' } });
      expect(bootstrap.status, JSON.stringify(bootstrap.body)).to.equal(200);
      const { payload, protectedHeader } = await jwtVerify(bootstrap.body.access_token as string, publicKey, { issuer: TOKEN_ISSUER, algorithms: ['EdDSA'] });
      expect(payload.sub).to.equal(bootstrap.body.user_id);
      expect(protectedHeader.kid).to.equal(key.kid);
    } finally {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    }
  });
});
