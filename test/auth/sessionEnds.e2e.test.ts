// The session-ending table: which IAM changes end a user's sessions (old tokens 401), which end nothing, to the millisecond.
import { expect } from 'chai';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { SESSION_ENDED_MESSAGE } from '../../src/iam/authenticator.js';
import { fixedClock } from '../../src/kernel/clock.js';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, client, expectUnauthenticated, login, payloadOf, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('sessions ended by IAM changes', () => {
  let service: Service;
  let admin: Admin;
  let userId: string;
  let password = 'carol-password-1';
  const email = 'carol@example.com';
  const roles: Record<string, string> = {};

  const adminApi = () => client(service.url, admin.token);
  const me = (token: string) => client(service.url, token).get('/auth/me');

  async function createRole(name: string, scopes: string[]): Promise<string> {
    const created = await adminApi().post('/auth/admin/roles', { name, scopes });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id as string;
  }

  async function assign(roleId: string): Promise<void> {
    const assigned = await adminApi().post(`/auth/admin/users/${userId}/roles/${roleId}`);
    expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  }

  /** A token minted now works; after `change` it answers 401 "Session ended", and a fresh login works. */
  async function expectChangeEndsSessions(change: () => Promise<void>): Promise<string> {
    const old = await login(service.url, email, password);
    expect((await me(old)).status).to.equal(200);
    await change();
    expectUnauthenticated(await me(old), SESSION_ENDED_MESSAGE);
    expectUnauthenticated(await client(service.url, old).post('/auth/refresh'), SESSION_ENDED_MESSAGE);
    const fresh = await login(service.url, email, password);
    const after = await me(fresh);
    expect(after.status, JSON.stringify(after.body)).to.equal(200);
    // The admin's own session is not touched by another user's session end.
    expect((await me(admin.token)).status).to.equal(200);
    return fresh;
  }

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
    const created = await adminApi().post('/auth/admin/users', { email, password });
    expect(created.status).to.equal(201);
    userId = created.body.id;
    roles.base = await createRole('base', ['runs:read', 'runs:control']);
    await assign(roles.base);
  });
  after(async () => {
    await service?.close();
  });

  it('ends them when the user is deactivated (and reactivation does not bring old tokens back)', async () => {
    const old = await login(service.url, email, password);
    expect((await adminApi().patch(`/auth/admin/users/${userId}`, { is_active: false })).status).to.equal(200);
    expectUnauthenticated(await me(old), SESSION_ENDED_MESSAGE);
    expect((await adminApi().patch(`/auth/admin/users/${userId}`, { is_active: true })).status).to.equal(200);
    expectUnauthenticated(await me(old), SESSION_ENDED_MESSAGE);
    const fresh = await login(service.url, email, password);
    expect((await me(fresh)).status).to.equal(200);
  });

  it('ends them when the password changes; the new password works at once', async () => {
    await expectChangeEndsSessions(async () => {
      password = 'carol-password-2';
      expect((await adminApi().patch(`/auth/admin/users/${userId}`, { password })).status).to.equal(200);
    });
  });

  it('ends them when a role is removed from the user', async () => {
    roles.removable = await createRole('removable', ['artifacts:read']);
    await assign(roles.removable);
    const fresh = await expectChangeEndsSessions(async () => {
      expect((await adminApi().delete(`/auth/admin/users/${userId}/roles/${roles.removable}`)).status).to.equal(200);
    });
    expect(payloadOf(fresh).groups).to.deep.equal(['base']);
  });

  it('ends them when a held role is deleted', async () => {
    roles.doomed = await createRole('doomed', ['artifacts:write']);
    await assign(roles.doomed);
    const fresh = await expectChangeEndsSessions(async () => {
      expect((await adminApi().delete(`/auth/admin/roles/${roles.doomed}`)).status).to.equal(204);
    });
    expect(payloadOf(fresh).groups).to.deep.equal(['base']);
    expect(payloadOf(fresh).scopes).to.deep.equal(['runs:control', 'runs:read']);
  });

  it('ends them when a held role is stripped of a scope', async () => {
    const fresh = await expectChangeEndsSessions(async () => {
      const changed = await adminApi().patch(`/auth/admin/roles/${roles.base}/scopes`, { remove: ['runs:control'] });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    });
    expect(payloadOf(fresh).scopes).to.deep.equal(['runs:read']);
  });

  it('ends nothing when a role is granted or scopes are added', async () => {
    const token = await login(service.url, email, password);
    roles.granted = await createRole('granted', ['approvals:decide']);
    await assign(roles.granted);
    expect((await adminApi().patch(`/auth/admin/roles/${roles.base}/scopes`, { add: ['runs:control'] })).status).to.equal(200);
    // A scope removed from a role the user does not hold ends nothing either.
    const unrelated = await createRole('unrelated', ['x:y', 'x:z']);
    expect((await adminApi().patch(`/auth/admin/roles/${unrelated}/scopes`, { remove: ['x:y'] })).status).to.equal(200);
    const still = await me(token);
    expect(still.status, JSON.stringify(still.body)).to.equal(200);
    // The snapshot of the token does not change either.
    expect(still.body).to.deep.equal({ user_id: userId, groups: ['base'], scopes: ['runs:read'] });
  });

  it('ends them when the user is deleted; the email is free again afterwards', async () => {
    const old = await login(service.url, email, password);
    expect((await adminApi().delete(`/auth/admin/users/${userId}`)).status).to.equal(204);
    expectUnauthenticated(await me(old), SESSION_ENDED_MESSAGE);
    const again = await adminApi().post('/auth/admin/users', { email, password });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const fresh = await login(service.url, email, password);
    expect((await me(fresh)).body).to.deep.equal({ user_id: again.body.id, groups: [], scopes: [] });
  });
});

describe('session end precision', () => {
  const start = new Date(Math.floor(Date.now() / 1000) * 1000 + 123);
  const clock = fixedClock(start);
  // A restart must keep the key, or every old token fails for that reason alone.
  const env = { SVC_SIGNING_KEY: generateSigningKeyHex() };
  let databaseUrl: string;
  let service: Service;
  let admin: Admin;
  let userId: string;
  const email = 'dave@example.com';
  const password = 'dave-password-1';
  let justBefore: string;
  let sameMillisecond: string;
  let justAfter: string;
  let endMs: number;

  const me = (token: string) => client(service.url, token).get('/auth/me');

  before(async () => {
    databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl, clock, env });
    admin = await bootstrapAdmin(service.url);
    const created = await client(service.url, admin.token).post('/auth/admin/users', { email, password });
    userId = created.body.id;

    clock.advance(500);
    justBefore = await login(service.url, email, password);
    clock.advance(1);
    endMs = clock.now().getTime();
    expect((await client(service.url, admin.token).patch(`/auth/admin/users/${userId}`, { is_active: false })).status).to.equal(200);
    expect((await client(service.url, admin.token).patch(`/auth/admin/users/${userId}`, { is_active: true })).status).to.equal(200);
    sameMillisecond = await login(service.url, email, password);
    clock.advance(1);
    justAfter = await login(service.url, email, password);
  });
  after(async () => {
    await service?.close();
  });

  it('issues iat in seconds with millisecond precision', () => {
    expect(payloadOf(justBefore).iat).to.equal((endMs - 1) / 1000);
    expect(payloadOf(justBefore).iat % 1).to.not.equal(0);
  });

  it('refuses a token minted 1 ms before the end and accepts tokens minted at or after it', async () => {
    expectUnauthenticated(await me(justBefore), SESSION_ENDED_MESSAGE);
    expect((await me(sameMillisecond)).status).to.equal(200);
    expect((await me(justAfter)).status).to.equal(200);
  });

  it('keeps the millisecond after a restart, when the end is loaded from the read model', async () => {
    await service.close();
    service = await startTestService({ databaseUrl, clock, env });
    expectUnauthenticated(await me(justBefore), SESSION_ENDED_MESSAGE);
    expect((await me(sameMillisecond)).status).to.equal(200);
    expect((await me(justAfter)).status).to.equal(200);
  });
});
