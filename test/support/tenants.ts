// Users of a multi-tenant deployment (SVC_TENANT_IDS): created in a tenant by a deployment admin, with roles.
import { expect } from 'chai';
import { client, login } from './http.js';

export const TENANT_PASSWORD = 'tenant-tests-password';

export interface TenantUser {
  id: string;
  token: string;
  email: string;
}

/** The id of the role `name`, created with `scopes` when it does not exist yet. */
export async function roleId(baseUrl: string, adminToken: string, name: string, scopes: string[] = []): Promise<string> {
  const admin = client(baseUrl, adminToken);
  const existing = ((await admin.get('/auth/admin/roles')).body as { id: string; name: string }[]).find((r) => r.name === name);
  if (existing) return existing.id;
  const created = await admin.post('/auth/admin/roles', { name, scopes });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body.id as string;
}

/** A user of `tenant` holding the given roles (role name -> scopes; a role is also a group), signed in. */
export async function createTenantUser(baseUrl: string, adminToken: string, email: string, tenant: string, roles: Record<string, string[]> = {}): Promise<TenantUser> {
  const admin = client(baseUrl, adminToken);
  const created = await admin.post('/auth/admin/users', { email, password: TENANT_PASSWORD, tenant });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const id = created.body.id as string;
  for (const [name, scopes] of Object.entries(roles)) {
    const assigned = await admin.post(`/auth/admin/users/${id}/roles/${await roleId(baseUrl, adminToken, name, scopes)}`);
    expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  }
  return { id, email, token: await login(baseUrl, email, TENANT_PASSWORD) };
}
