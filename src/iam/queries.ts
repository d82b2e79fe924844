// IAM reads from the projections; every function receives its client.
import type { Queryable } from '../db/pool.js';
import type { TenantFence } from './commands.js';

/** Email, phone number and federated subject are sealed in the read model: open them before answering. */
export interface UserRecord {
  id: string;
  email: string | null;
  phone_number: string | null;
  is_active: boolean;
  has_password: boolean;
  tenant: string | null;
  federated_provider: string | null;
  federated_sub: string | null;
  roles: { id: string; name: string }[];
  created_at: string;
  updated_at: string;
}

export interface RoleRecord {
  id: string;
  name: string;
  description: string;
  scopes: string[];
  created_at: string;
  updated_at: string;
}

export interface LoginCandidate {
  id: string;
  hashed_password: string | null;
  is_active: boolean;
}

export interface Grants {
  groups: string[];
  scopes: string[];
}

const USER_SELECT = `
  SELECT u.id, u.email, u.phone_number, u.is_active, u.hashed_password IS NOT NULL AS has_password, u.tenant,
         u.federated_provider, u.federated_sub, u.created_at, u.updated_at,
         coalesce((SELECT jsonb_agg(jsonb_build_object('id', r.id, 'name', r.name) ORDER BY r.name)
                   FROM iam_user_roles ur JOIN iam_roles r ON r.id = ur.role_id WHERE ur.user_id = u.id), '[]') AS roles
  FROM iam_users u`;

/** A page of users; with a tenant admin's fence, only the users of its tenant that do not hold the superadmin role. */
export async function listUsers(db: Queryable, limit: number, offset: number, fence?: TenantFence): Promise<UserRecord[]> {
  const { rows } = await db.query<UserRecord>(
    `${USER_SELECT}
     WHERE NOT $3::boolean OR (u.tenant IS NOT DISTINCT FROM $4 AND NOT EXISTS (SELECT 1 FROM iam_user_roles ur WHERE ur.user_id = u.id AND ur.role_id = $5))
     ORDER BY u.created_at, u.id LIMIT $1 OFFSET $2`,
    [limit, offset, fence !== undefined, fence?.tenant ?? null, fence?.superadminRoleId ?? null],
  );
  return rows;
}

export async function findUser(db: Queryable, id: string): Promise<UserRecord | undefined> {
  const { rows } = await db.query<UserRecord>(`${USER_SELECT} WHERE u.id = $1`, [id]);
  return rows[0];
}

/** The password hash and active flag of one account, as they are now. */
export async function findCredentials(db: Queryable, id: string): Promise<LoginCandidate | undefined> {
  const { rows } = await db.query<LoginCandidate>('SELECT id, hashed_password, is_active FROM iam_users WHERE id = $1', [id]);
  return rows[0];
}

/** The account a username names, by the blind indexes of the username as an email (lower-cased) and as a phone number. */
export async function findLoginCandidate(db: Queryable, indexes: { email: string; phone: string }): Promise<LoginCandidate | undefined> {
  const { rows } = await db.query<LoginCandidate>(
    `SELECT id, hashed_password, is_active FROM iam_users
     WHERE email_index = $1 OR phone_index = $2
     ORDER BY email_index = $1 DESC LIMIT 1`,
    [indexes.email, indexes.phone],
  );
  return rows[0];
}

/** Role names and the distinct union of their scopes, as minted into tokens. */
export async function grantsOf(db: Queryable, userId: string): Promise<Grants> {
  const { rows } = await db.query<{ name: string; scopes: string[] }>(
    `SELECT r.name, r.scopes FROM iam_user_roles ur JOIN iam_roles r ON r.id = ur.role_id
     WHERE ur.user_id = $1 ORDER BY r.name`,
    [userId],
  );
  return { groups: rows.map((r) => r.name), scopes: [...new Set(rows.flatMap((r) => r.scopes))].sort() };
}

export async function listRoles(db: Queryable): Promise<RoleRecord[]> {
  const { rows } = await db.query<RoleRecord>('SELECT id, name, description, scopes, created_at, updated_at FROM iam_roles ORDER BY name');
  return rows;
}

export async function findRole(db: Queryable, id: string): Promise<RoleRecord | undefined> {
  const { rows } = await db.query<RoleRecord>('SELECT id, name, description, scopes, created_at, updated_at FROM iam_roles WHERE id = $1', [id]);
  return rows[0];
}

export async function findRoleByName(db: Queryable, name: string): Promise<RoleRecord | undefined> {
  const { rows } = await db.query<RoleRecord>('SELECT id, name, description, scopes, created_at, updated_at FROM iam_roles WHERE name = $1', [name]);
  return rows[0];
}

export async function anyUserExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM iam_users LIMIT 1');
  return rows.length > 0;
}

export async function loadSessionEnds(db: Queryable): Promise<{ user_id: string; ended_at: string }[]> {
  const { rows } = await db.query<{ user_id: string; ended_at: string }>('SELECT user_id, ended_at FROM iam_session_ends');
  return rows;
}

export async function loadActiveRevocations(db: Queryable): Promise<{ jti: string; expires_at: string | null }[]> {
  const { rows } = await db.query<{ jti: string; expires_at: string | null }>(
    'SELECT jti, expires_at FROM iam_revoked_tokens WHERE expires_at IS NULL OR expires_at > now()',
  );
  return rows;
}

export interface AccountRow {
  id: string;
  email: string | null;
  is_active: boolean;
  federated_provider: string | null;
  federated_sub: string | null;
  tenant: string | null;
}

/** By the blind index of `<provider> <subject>`. */
export async function findUserByFederatedIdentity(db: Queryable, federatedIndex: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>(
    'SELECT id, email, is_active, federated_provider, federated_sub, tenant FROM iam_users WHERE federated_index = $1',
    [federatedIndex],
  );
  return rows[0];
}

/** By the blind index of the lower-cased email. */
export async function findUserByEmail(db: Queryable, emailIndex: string): Promise<AccountRow | undefined> {
  const { rows } = await db.query<AccountRow>('SELECT id, email, is_active, federated_provider, federated_sub, tenant FROM iam_users WHERE email_index = $1', [
    emailIndex,
  ]);
  return rows[0];
}
