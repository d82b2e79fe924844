// Users for e2e tests, made through the admin API as an administrator would: one createUser for the suite.
import { expect } from 'chai';
import { client, login } from './http.js';

/** The password of every user createUser makes, unless told another. */
export const USER_PASSWORD = 'test-user-password';

export interface UserOptions {
  /** A tenant of a multi-tenant deployment (SVC_TENANT_IDS). */
  tenant?: string;
  password?: string;
  /** More fields of POST /auth/admin/users (phone_number, ...). */
  fields?: Record<string, unknown>;
  /** false: created only, no sign-in (and so no session); the answer has no token. */
  signIn?: boolean;
}

export interface CreatedUser {
  id: string;
  email: string;
}

export interface SignedInUser extends CreatedUser {
  token: string;
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

/**
 * Creates a user holding `roles` (role name -> scopes; a role missing yet is created with those
 * scopes, and a role is also a group) and signs it in, unless `signIn` is false.
 */
export async function createUser(
  baseUrl: string,
  adminToken: string,
  email: string,
  roles: Record<string, string[]> | undefined,
  options: UserOptions & { signIn: false },
): Promise<CreatedUser>;
export async function createUser(
  baseUrl: string,
  adminToken: string,
  email: string,
  roles?: Record<string, string[]>,
  options?: UserOptions,
): Promise<SignedInUser>;
export async function createUser(
  baseUrl: string,
  adminToken: string,
  email: string,
  roles: Record<string, string[]> = {},
  options: UserOptions = {},
): Promise<CreatedUser | SignedInUser> {
  const admin = client(baseUrl, adminToken);
  const password = options.password ?? USER_PASSWORD;
  const created = await admin.post('/auth/admin/users', {
    email,
    password,
    ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
    ...options.fields,
  });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const id = created.body.id as string;
  for (const [name, scopes] of Object.entries(roles)) {
    const assigned = await admin.post(`/auth/admin/users/${id}/roles/${await roleId(baseUrl, adminToken, name, scopes)}`);
    expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  }
  if (options.signIn === false) return { id, email };
  return { id, email, token: await login(baseUrl, email, password) };
}
