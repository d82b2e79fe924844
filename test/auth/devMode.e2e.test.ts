// The dev-key shortcut (dev mode only, constant key, IP allowlist) and the production guard on the signing key.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { loadSettings, SettingsError } from '../../src/config/settings.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, expectUnauthenticated } from '../support/http.js';
import { startTestService } from '../support/service.js';

const DEV_KEY = 'ABCD-EFGH-IJKL-MNOP';
const DEV_ENV = { SVC_DEV_MODE: 'true', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: DEV_KEY };

describe('dev mode', () => {
  let databaseUrl: string;
  const services: Service[] = [];
  let dev: Service;

  async function start(env: Record<string, string>): Promise<Service> {
    const service = await startTestService({ databaseUrl, env });
    services.push(service);
    return service;
  }

  before(async () => {
    databaseUrl = await createTestDatabase();
    dev = await start(DEV_ENV);
  });
  after(async () => {
    await Promise.all(services.map((s) => s.close()));
  });

  it('maps the raw dev key to the synthetic dev principal with iam:admin', async () => {
    const me = await call(dev.url, 'GET', '/auth/me', { token: DEV_KEY });
    expect(me.status, JSON.stringify(me.body)).to.equal(200);
    expect(me.body).to.deep.equal({ user_id: 'dev', groups: ['dev'], scopes: ['iam:admin'] });
    expect((await call(dev.url, 'GET', '/auth/admin/roles', { token: DEV_KEY })).status).to.equal(200);
  });

  it('refuses a wrong key of the same length, another case, and the key with extra characters', async () => {
    for (const wrong of ['ABCD-EFGH-IJKL-MNOQ', 'abcd-efgh-ijkl-mnop', 'ABCD-EFGH-IJKL-MNO', `${DEV_KEY}X`, 'XBCD-EFGH-IJKL-MNOP']) {
      expectUnauthenticated(await call(dev.url, 'GET', '/auth/me', { token: wrong }));
      expectUnauthenticated(await call(dev.url, 'GET', '/auth/admin/roles', { token: wrong }));
    }
    expectUnauthenticated(await call(dev.url, 'GET', '/auth/me'));
  });

  it('still accepts real tokens beside the key', async () => {
    const admin = await bootstrapAdmin(dev.url);
    const me = await call(dev.url, 'GET', '/auth/me', { token: admin.token });
    expect(me.body).to.deep.include({ user_id: admin.userId, groups: ['superadmin'] });
  });

  it('refuses the key from an address outside SVC_DEV_IP_ALLOWLIST', async () => {
    const elsewhere = await start({ ...DEV_ENV, SVC_DEV_IP_ALLOWLIST: '10.9.9.9,192.0.2.1' });
    expectUnauthenticated(await call(elsewhere.url, 'GET', '/auth/me', { token: DEV_KEY }));
    expectUnauthenticated(await call(elsewhere.url, 'GET', '/auth/admin/users', { token: DEV_KEY }));
    const loopback = await start({ ...DEV_ENV, SVC_DEV_IP_ALLOWLIST: '127.0.0.1' });
    expect((await call(loopback.url, 'GET', '/auth/me', { token: DEV_KEY })).status).to.equal(200);
  });

  it('refuses the key when dev mode is off, even with the key configured', async () => {
    const envs: Record<string, string>[] = [{ SVC_DEV_API_KEY: DEV_KEY }, { SVC_DEV_MODE: 'false', SVC_ALLOW_DEV_AUTH: 'true', SVC_DEV_API_KEY: DEV_KEY }, {}];
    for (const env of envs) {
      const plain = await start(env);
      expectUnauthenticated(await call(plain.url, 'GET', '/auth/me', { token: DEV_KEY }));
      expectUnauthenticated(await call(plain.url, 'GET', '/auth/admin/users', { token: DEV_KEY }));
    }
  });
});

describe('startup settings for auth', () => {
  let emptyDir: string;
  before(async () => {
    // No svc.yaml: only the given environment counts.
    emptyDir = await mkdtemp(path.join(tmpdir(), 'svc-auth-settings-'));
  });
  after(async () => {
    await rm(emptyDir, { recursive: true, force: true });
  });

  const settingsError = (env: Record<string, string>): SettingsError => {
    try {
      loadSettings(env, emptyDir);
    } catch (error) {
      expect(error).to.be.instanceOf(SettingsError);
      return error as SettingsError;
    }
    return expect.fail(`settings ${JSON.stringify(env)} were accepted`);
  };

  it('refuses production without SVC_SIGNING_KEY', () => {
    const error = settingsError({ SVC_ENV: 'production' });
    expect(error.problems.join('\n')).to.match(/SVC_SIGNING_KEY/);
  });

  it('refuses to start the service in production without SVC_SIGNING_KEY', async () => {
    let failure: unknown;
    await startTestService({ env: { SVC_ENV: 'production' } }).then(
      (service) => service.close(),
      (error: unknown) => {
        failure = error;
      },
    );
    expect(failure).to.be.instanceOf(SettingsError);
  });

  it('accepts production with a 64-hex-character key, and refuses a malformed one', () => {
    const key = generateSigningKeyHex();
    expect(loadSettings({ SVC_ENV: 'production', SVC_SIGNING_KEY: key }, emptyDir).signingKeyHex).to.equal(key);
    expect(settingsError({ SVC_ENV: 'production', SVC_SIGNING_KEY: key.slice(2) }).problems.join('\n')).to.match(/SVC_SIGNING_KEY/);
  });

  it('refuses dev mode in production, and dev mode without SVC_ALLOW_DEV_AUTH', () => {
    expect(settingsError({ ...DEV_ENV, SVC_ENV: 'production', SVC_SIGNING_KEY: generateSigningKeyHex() }).problems.join('\n')).to.match(/SVC_DEV_MODE/);
    expect(settingsError({ SVC_DEV_MODE: 'true', SVC_DEV_API_KEY: DEV_KEY }).problems.join('\n')).to.match(/SVC_ALLOW_DEV_AUTH/);
    expect(settingsError({ ...DEV_ENV, SVC_DEV_API_KEY: 'abcd-efgh-ijkl-mnop' }).problems.join('\n')).to.match(/SVC_DEV_API_KEY/);
  });
});
