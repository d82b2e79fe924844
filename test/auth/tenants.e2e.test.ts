// Multi-tenant deployments (SVC_TENANT_IDS): tokens carry a tenant, and only allowlisted tenants pass.
import { randomUUID, sign } from 'node:crypto';
import { expect } from 'chai';
import { generateSigningKeyHex, privateKeyFromHex } from '../../src/iam/keys.js';
import { TOKEN_ISSUER } from '../../src/iam/tokens.js';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectError, expectUnauthenticated, login, payloadOf, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('multi-tenant tokens', () => {
  const signingKeyHex = generateSigningKeyHex();
  let service: Service;
  let admin: Admin;
  let kid: string;

  function signed(claims: Record<string, unknown>): string {
    const input = `${Buffer.from(JSON.stringify({ alg: 'EdDSA', kid, typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${sign(null, Buffer.from(input), privateKeyFromHex(signingKeyHex)).toString('base64url')}`;
  }
  function adminClaims(tenant: unknown): Record<string, unknown> {
    const now = Date.now() / 1000;
    return {
      iss: TOKEN_ISSUER,
      sub: admin.userId,
      groups: ['superadmin'],
      scopes: ['iam:admin'],
      ...(tenant !== undefined ? { tenant } : {}),
      iat: now,
      exp: Math.floor(now) + 600,
      jti: randomUUID(),
    };
  }

  before(async () => {
    service = await startTestService({ env: { SVC_TENANT_IDS: 't1,t2', SVC_SIGNING_KEY: signingKeyHex } });
    admin = await bootstrapAdmin(service.url);
    kid = (await call(service.url, 'GET', '/auth/jwks.json')).body.keys[0].kid;
  });
  after(async () => {
    await service?.close();
  });

  it('mints tokens with the tenant of the user (the first of SVC_TENANT_IDS by default)', async () => {
    expect(payloadOf(admin.token).tenant).to.equal('t1');
    const me = await client(service.url, admin.token).get('/auth/me');
    expect(me.body).to.deep.equal({ user_id: admin.userId, groups: ['superadmin'], scopes: ['iam:admin'], tenant: 't1' });
  });

  it('places a user in another listed tenant, and refuses an unlisted one', async () => {
    const created = await client(service.url, admin.token).post('/auth/admin/users', { email: 'gus@example.com', password: 'gus-password-1', tenant: 't2' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.tenant).to.equal('t2');
    const token = await login(service.url, 'gus@example.com', 'gus-password-1');
    expect(payloadOf(token).tenant).to.equal('t2');
    expect((await client(service.url, token).get('/auth/me')).body.tenant).to.equal('t2');
    expectError(
      await client(service.url, admin.token).post('/auth/admin/users', { email: 'hal@example.com', password: 'hal-password-1', tenant: 't3' }),
      400,
      'BAD_REQUEST',
    );
  });

  it('accepts a correctly signed token of a listed tenant', async () => {
    expect((await client(service.url, signed(adminClaims('t2'))).get('/auth/me')).status).to.equal(200);
  });

  it('refuses a correctly signed token whose tenant is not listed, is missing or is not a string', async () => {
    for (const tenant of ['t3', 'T1', '', undefined, 1, ['t1']]) {
      const token = signed(adminClaims(tenant));
      expectUnauthenticated(await client(service.url, token).get('/auth/me'), /tenant/);
      expectUnauthenticated(await client(service.url, token).get('/auth/admin/users'), /tenant/);
    }
  });
});
