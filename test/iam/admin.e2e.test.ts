// The IAM admin routes (/auth/admin, scope iam:admin): answers, 404/409/422/400 cases, 401 and 403.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { bootstrapAdmin, call, client, expectError, expectUnauthenticated, login, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const UNKNOWN_ID = '0190f3a0-0000-7000-8000-000000000000';
const NOT_A_UUID = 'not-a-uuid';

describe('IAM admin routes', () => {
  let service: Service;
  let admin: Admin;
  let erin: { id: string; token: string };
  let viewerRoleId: string;

  const api = () => client(service.url, admin.token);

  before(async () => {
    service = await startTestService();
    admin = await bootstrapAdmin(service.url);
    const viewer = await api().post('/auth/admin/roles', { name: 'viewer', description: 'reads runs', scopes: ['runs:read'] });
    viewerRoleId = viewer.body.id;
    const created = await api().post('/auth/admin/users', { email: 'erin@example.com', password: 'erin-password-1' });
    await api().post(`/auth/admin/users/${created.body.id}/roles/${viewerRoleId}`);
    erin = { id: created.body.id, token: await login(service.url, 'erin@example.com', 'erin-password-1') };
  });
  after(async () => {
    await service?.close();
  });

  describe('access', () => {
    const routes: [string, string, unknown?][] = [
      ['GET', '/auth/admin/users'],
      ['POST', '/auth/admin/users', { email: 'x@example.com', password: 'x-password-1' }],
      ['GET', `/auth/admin/users/${UNKNOWN_ID}`],
      ['PATCH', `/auth/admin/users/${UNKNOWN_ID}`, { is_active: false }],
      ['DELETE', `/auth/admin/users/${UNKNOWN_ID}`],
      ['GET', '/auth/admin/roles'],
      ['POST', '/auth/admin/roles', { name: 'sneaky' }],
      ['DELETE', `/auth/admin/roles/${UNKNOWN_ID}`],
      ['PATCH', `/auth/admin/roles/${UNKNOWN_ID}/scopes`, { add: ['iam:admin'] }],
      ['POST', `/auth/admin/users/${UNKNOWN_ID}/roles/${UNKNOWN_ID}`],
      ['DELETE', `/auth/admin/users/${UNKNOWN_ID}/roles/${UNKNOWN_ID}`],
    ];

    it('answers 401 with WWW-Authenticate: Bearer on every route without a token', async () => {
      for (const [method, path, json] of routes) {
        const anonymous = await call(service.url, method, path, json !== undefined ? { json } : {});
        expectUnauthenticated(anonymous, 'Not authenticated');
      }
      // A token-looking value that is not a token is refused the same way.
      expectUnauthenticated(await call(service.url, 'GET', '/auth/admin/users', { token: 'e30.e30.e30' }));
    });

    it('answers 403 on every route to a user whose roles lack iam:admin', async () => {
      const erinApi = client(service.url, erin.token);
      expect((await erinApi.get('/auth/me')).status).to.equal(200);
      for (const [method, path, json] of routes) {
        const result = await call(service.url, method, path, { token: erin.token, ...(json !== undefined ? { json } : {}) });
        expectError(result, 403, 'PERMISSION_DENIED');
        expect(result.body.detail).to.match(/iam:admin/);
      }
      // Nothing was created by the refused calls.
      expect((await api().get('/auth/admin/roles')).body.map((r: { name: string }) => r.name)).to.not.include('sneaky');
    });
  });

  describe('users', () => {
    let frankId: string;

    it('creates a user: 201 with the record, without any password field', async () => {
      const created = await api().post('/auth/admin/users', { email: 'Frank@Example.com', password: 'frank-password-1', phone_number: '+15550199' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      frankId = created.body.id;
      expect(created.body).to.include({ email: 'Frank@Example.com', phone_number: '+15550199', is_active: true, has_password: true });
      expect(created.body.roles).to.deep.equal([]);
      expect(JSON.stringify(created.body)).to.not.match(/\$2b\$|hashed_password/);
    });

    it('lists and reads users', async () => {
      const list = await api().get('/auth/admin/users');
      expect(list.status).to.equal(200);
      expect(list.body.map((u: { email: string }) => u.email)).to.include.members([admin.email, 'erin@example.com', 'Frank@Example.com']);
      const paged = await api().get('/auth/admin/users?limit=1&offset=1');
      expect(paged.body).to.have.length(1);
      expect(paged.body[0].id).to.equal(list.body[1].id);
      for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'offset=-1']) {
        const bad = await api().get(`/auth/admin/users?${query}`);
        expect(bad.status, query).to.equal(422);
        expect(bad.body.detail[0].loc[0]).to.equal('query');
      }
      const one = await api().get(`/auth/admin/users/${erin.id}`);
      expect(one.status).to.equal(200);
      expect(one.body).to.include({ id: erin.id, email: 'erin@example.com' });
      expect(one.body.roles).to.deep.equal([{ id: viewerRoleId, name: 'viewer' }]);
    });

    it('answers 409 for an email taken in any case, and for a taken phone number', async () => {
      expectError(await api().post('/auth/admin/users', { email: 'ERIN@example.com', password: 'another-pass-1' }), 409, 'ALREADY_EXISTS');
      expectError(
        await api().post('/auth/admin/users', { email: 'g@example.com', password: 'another-pass-1', phone_number: '+15550199' }),
        409,
        'ALREADY_EXISTS',
      );
    });

    it('answers 422 with the detail array for missing fields, wrong types and extra fields', async () => {
      const missing = await api().post('/auth/admin/users', {});
      expect(missing.status).to.equal(422);
      expect(missing.body.detail).to.have.deep.members([
        { loc: ['body', 'email'], msg: 'Field required', type: 'missing' },
        { loc: ['body', 'password'], msg: 'Field required', type: 'missing' },
      ]);
      const wrongType = await api().post('/auth/admin/users', { email: ['a@example.com'], password: 12345678 });
      expect(wrongType.status).to.equal(422);
      expect(wrongType.body.detail).to.have.deep.members([
        { loc: ['body', 'email'], msg: 'Input should be a valid string', type: 'string_type' },
        { loc: ['body', 'password'], msg: 'Input should be a valid string', type: 'string_type' },
      ]);
      const extra = await api().post('/auth/admin/users', { email: 'h@example.com', password: 'h-password-1', is_admin: true });
      expect(extra.status).to.equal(422);
      expect(extra.body.detail).to.deep.equal([{ loc: ['body', 'is_admin'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
      const badBool = await api().patch(`/auth/admin/users/${erin.id}`, { is_active: 'false' });
      expect(badBool.status).to.equal(422);
      expect(badBool.body.detail).to.deep.equal([{ loc: ['body', 'is_active'], msg: 'Input should be a valid boolean', type: 'bool_type' }]);
      const extraPatch = await api().patch(`/auth/admin/users/${erin.id}`, { roles: [] });
      expect(extraPatch.status).to.equal(422);
      expect(extraPatch.body.detail[0]).to.include({ type: 'extra_forbidden' });
    });

    it('answers 400 for an invalid email or a too short password', async () => {
      expectError(await api().post('/auth/admin/users', { email: 'no-at-sign', password: 'long-enough-1' }), 400, 'BAD_REQUEST');
      expectError(await api().post('/auth/admin/users', { email: 'short@example.com', password: 'short' }), 400, 'BAD_REQUEST');
      expectError(await api().patch(`/auth/admin/users/${erin.id}`, { email: 'broken@' }), 400, 'BAD_REQUEST');
    });

    it('updates email and is_active', async () => {
      const changed = await api().patch(`/auth/admin/users/${frankId}`, { email: 'frank@new.example.com' });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body).to.include({ id: frankId, email: 'frank@new.example.com', is_active: true });
      const off = await api().patch(`/auth/admin/users/${frankId}`, { is_active: false });
      expect(off.body.is_active).to.equal(false);
      const unchanged = await api().patch(`/auth/admin/users/${frankId}`, {});
      expect(unchanged.status).to.equal(200);
      expect(unchanged.body).to.include({ email: 'frank@new.example.com', is_active: false });
      // The old email was given back: another user may take it.
      const reuse = await api().post('/auth/admin/users', { email: 'frank@example.com', password: 'frank-password-2' });
      expect(reuse.status, JSON.stringify(reuse.body)).to.equal(201);
      expectError(await api().patch(`/auth/admin/users/${frankId}`, { email: 'ERIN@EXAMPLE.COM' }), 409, 'ALREADY_EXISTS');
    });

    it('answers 404 for unknown and non-uuid user ids on every user route', async () => {
      for (const id of [UNKNOWN_ID, NOT_A_UUID]) {
        expectError(await api().get(`/auth/admin/users/${id}`), 404, 'NOT_FOUND');
        expectError(await api().patch(`/auth/admin/users/${id}`, { is_active: false }), 404, 'NOT_FOUND');
        expectError(await api().delete(`/auth/admin/users/${id}`), 404, 'NOT_FOUND');
        expectError(await api().post(`/auth/admin/users/${id}/roles/${viewerRoleId}`), 404, 'NOT_FOUND');
        expectError(await api().delete(`/auth/admin/users/${id}/roles/${viewerRoleId}`), 404, 'NOT_FOUND');
      }
    });

    it('deletes a user: 204, then 404', async () => {
      const deleted = await api().delete(`/auth/admin/users/${frankId}`);
      expect(deleted.status).to.equal(204);
      expectError(await api().get(`/auth/admin/users/${frankId}`), 404, 'NOT_FOUND');
      expectError(await api().delete(`/auth/admin/users/${frankId}`), 404, 'NOT_FOUND');
      expectError(await api().patch(`/auth/admin/users/${frankId}`, { is_active: true }), 404, 'NOT_FOUND');
    });
  });

  describe('roles', () => {
    let opsId: string;

    it('creates a role: 201 with sorted distinct scopes', async () => {
      const created = await api().post('/auth/admin/roles', {
        name: 'team:ops/on-call.v2',
        description: 'pager',
        scopes: ['runs:read', 'approvals:decide', 'runs:read'],
      });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      opsId = created.body.id;
      expect(created.body).to.include({ name: 'team:ops/on-call.v2', description: 'pager' });
      expect(created.body.scopes).to.deep.equal(['approvals:decide', 'runs:read']);
      const bare = await api().post('/auth/admin/roles', { name: 'bare' });
      expect(bare.status).to.equal(201);
      expect(bare.body).to.include({ description: '' });
      expect(bare.body.scopes).to.deep.equal([]);
    });

    it('lists roles', async () => {
      const list = await api().get('/auth/admin/roles');
      expect(list.status).to.equal(200);
      expect(list.body.map((r: { name: string }) => r.name)).to.include.members(['superadmin', 'viewer', 'team:ops/on-call.v2', 'bare']);
    });

    it('answers 409 for a taken role name', async () => {
      expectError(await api().post('/auth/admin/roles', { name: 'viewer' }), 409, 'ALREADY_EXISTS');
      expectError(await api().post('/auth/admin/roles', { name: 'superadmin', scopes: ['iam:admin'] }), 409, 'ALREADY_EXISTS');
    });

    it('answers 400 for role and scope names outside ^[\\w:.\\-/]+$', async () => {
      for (const name of ['has space', 'semi;colon', 'quote"', '']) {
        expectError(await api().post('/auth/admin/roles', { name }), 400, 'BAD_REQUEST');
      }
      expectError(await api().post('/auth/admin/roles', { name: 'fine', scopes: ['runs:read', 'no spaces'] }), 400, 'BAD_REQUEST');
      expectError(await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: ['bad scope'] }), 400, 'BAD_REQUEST');
      expect((await api().get('/auth/admin/roles')).body.map((r: { name: string }) => r.name)).to.not.include('fine');
    });

    it('answers 422 for a missing name, wrong types and extra fields', async () => {
      const missing = await api().post('/auth/admin/roles', { description: 'no name' });
      expect(missing.status).to.equal(422);
      expect(missing.body.detail).to.deep.equal([{ loc: ['body', 'name'], msg: 'Field required', type: 'missing' }]);
      const wrongType = await api().post('/auth/admin/roles', { name: 7 });
      expect(wrongType.body.detail).to.deep.equal([{ loc: ['body', 'name'], msg: 'Input should be a valid string', type: 'string_type' }]);
      const badScopes = await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: 'runs:read' });
      expect(badScopes.status).to.equal(422);
      expect(badScopes.body.detail).to.deep.equal([{ loc: ['body', 'add'], msg: 'Input should be a valid list', type: 'list_type' }]);
      const badItem = await api().patch(`/auth/admin/roles/${opsId}/scopes`, { remove: [1] });
      expect(badItem.body.detail).to.deep.equal([{ loc: ['body', 'remove', 0], msg: 'Input should be a valid string', type: 'string_type' }]);
      const extra = await api().patch(`/auth/admin/roles/${opsId}/scopes`, { set: ['a'] });
      expect(extra.status).to.equal(422);
      expect(extra.body.detail[0]).to.include({ type: 'extra_forbidden' });
    });

    it('adds and removes scopes in one atomic change', async () => {
      const changed = await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: ['runs:control', 'artifacts:read'], remove: ['runs:read'] });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body.scopes).to.deep.equal(['approvals:decide', 'artifacts:read', 'runs:control']);
      const onlyAdd = await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: ['runs:read'] });
      expect(onlyAdd.body.scopes).to.deep.equal(['approvals:decide', 'artifacts:read', 'runs:control', 'runs:read']);
      const noop = await api().patch(`/auth/admin/roles/${opsId}/scopes`, {});
      expect(noop.status).to.equal(200);
      expect(noop.body.scopes).to.deep.equal(onlyAdd.body.scopes);
    });

    it('answers 400 when a scope is both added and removed, changing nothing', async () => {
      expectError(await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: ['x:y', 'runs:read'], remove: ['runs:read'] }), 400, 'BAD_REQUEST');
      const role = (await api().get('/auth/admin/roles')).body.find((r: { id: string }) => r.id === opsId);
      expect(role.scopes).to.deep.equal(['approvals:decide', 'artifacts:read', 'runs:control', 'runs:read']);
    });

    it('assigns (idempotently) and revokes roles', async () => {
      const first = await api().post(`/auth/admin/users/${erin.id}/roles/${opsId}`);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.roles.map((r: { name: string }) => r.name)).to.deep.equal(['team:ops/on-call.v2', 'viewer']);
      const second = await api().post(`/auth/admin/users/${erin.id}/roles/${opsId}`);
      expect(second.status).to.equal(200);
      expect(second.body.roles).to.deep.equal(first.body.roles);
      const revoked = await api().delete(`/auth/admin/users/${erin.id}/roles/${opsId}`);
      expect(revoked.status).to.equal(200);
      expect(revoked.body.roles.map((r: { name: string }) => r.name)).to.deep.equal(['viewer']);
      expectError(await api().delete(`/auth/admin/users/${erin.id}/roles/${opsId}`), 404, 'NOT_FOUND');
    });

    it('answers 404 for unknown and non-uuid role ids on every role route', async () => {
      for (const id of [UNKNOWN_ID, NOT_A_UUID]) {
        expectError(await api().delete(`/auth/admin/roles/${id}`), 404, 'NOT_FOUND');
        expectError(await api().patch(`/auth/admin/roles/${id}/scopes`, { add: ['runs:read'] }), 404, 'NOT_FOUND');
        expectError(await api().post(`/auth/admin/users/${erin.id}/roles/${id}`), 404, 'NOT_FOUND');
        expectError(await api().delete(`/auth/admin/users/${erin.id}/roles/${id}`), 404, 'NOT_FOUND');
      }
    });

    it('deletes a role: 204, removes it from its holders, then 404; the name is free again', async () => {
      expect((await api().post(`/auth/admin/users/${erin.id}/roles/${opsId}`)).status).to.equal(200);
      const deleted = await api().delete(`/auth/admin/roles/${opsId}`);
      expect(deleted.status).to.equal(204);
      expectError(await api().delete(`/auth/admin/roles/${opsId}`), 404, 'NOT_FOUND');
      expectError(await api().patch(`/auth/admin/roles/${opsId}/scopes`, { add: ['a:b'] }), 404, 'NOT_FOUND');
      const user = await api().get(`/auth/admin/users/${erin.id}`);
      expect(user.body.roles.map((r: { name: string }) => r.name)).to.deep.equal(['viewer']);
      expect((await api().post('/auth/admin/roles', { name: 'team:ops/on-call.v2' })).status).to.equal(201);
    });
  });
});
