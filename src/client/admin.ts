// The administration calls the console needs beyond runs: users and roles, read and changed
// (`/auth/admin`, `iam:admin`; roles are changed by deployment admins only), the scopes palette
// (`/admin/scopes`, deployment admins), the audit log's verification (`audit:read`) and the
// artifacts (`artifacts:read`).
import { queryOf, type HttpCore } from './http.js';

export type AdminUser = {
  id: string;
  /** Null once the user was erased. */
  email: string | null;
  phone_number?: string | null;
  is_active: boolean;
  has_password?: boolean;
  tenant?: string | null;
  federated_provider?: string | null;
  roles?: { id: string; name: string }[];
  created_at?: string;
};

export type AdminRole = { id: string; name: string; description?: string; scopes: string[] };

/** A new user: an email and a password (the service's password policy applies). */
export type NewAdminUser = { email: string; password: string; phone_number?: string | null; tenant?: string };
/** What `updateUser` changes: only the fields given. */
export type AdminUserChanges = { email?: string; password?: string; is_active?: boolean; phone_number?: string | null };
export type NewAdminRole = { name: string; description?: string; scopes?: string[] };

/** Every enforceable scope by where it comes from. */
export type ScopesPalette = {
  crud: Record<string, Record<string, string>>;
  workflows: Record<string, string>;
  system: string[];
  crud_api_enabled: boolean;
};

export type ArtifactType = 'prompt' | 'steering' | 'skill' | 'guardrail' | 'hook' | 'mcp';
export type Artifact = {
  name: string;
  version: string;
  type: ArtifactType;
  source?: 'project' | 'upload';
  description?: string | null;
  hash: string;
  created_at?: string | null;
  content: unknown;
};
/** An artifact as the list shows it: its versions, without their content. */
export type ArtifactSummary = {
  name: string;
  type: ArtifactType;
  source: 'project' | 'upload';
  latest_version: string;
  versions: { version: string; source: 'project' | 'upload'; hash: string; description: string | null; created_at: string | null }[];
  /** Uploads under a project file's name (the file wins its name). */
  shadowed_uploads: number;
};

const segment = encodeURIComponent;

/**
 * @example
 * const users = await iamAdmin(http).users({ limit: 50 });
 * const ada = await iamAdmin(http).createUser({ email: 'ada@example.com', password: 'correct horse battery' });
 * await iamAdmin(http).assignRole(ada.id, editorsRoleId);
 */
export function iamAdmin(http: HttpCore) {
  const user = (id: string) => `/auth/admin/users/${segment(id)}`;
  const role = (id: string) => `/auth/admin/roles/${segment(id)}`;
  return {
    users: (page: { limit?: number; offset?: number } = {}): Promise<AdminUser[]> => http.json(`/auth/admin/users${queryOf(page)}`),
    createUser: (fields: NewAdminUser): Promise<AdminUser> => http.json('/auth/admin/users', { method: 'POST', body: fields }),
    /** Changes the fields given (`is_active: false` disables the account and ends its sessions). */
    updateUser: (id: string, changes: AdminUserChanges): Promise<AdminUser> => http.json(user(id), { method: 'PATCH', body: changes }),
    deleteUser: (id: string): Promise<void> => http.json(user(id), { method: 'DELETE' }),
    /** Grants role `roleId` to user `id`; answers the user with its roles. */
    assignRole: (id: string, roleId: string): Promise<AdminUser> => http.json(`${user(id)}/roles/${segment(roleId)}`, { method: 'POST' }),
    revokeRole: (id: string, roleId: string): Promise<AdminUser> => http.json(`${user(id)}/roles/${segment(roleId)}`, { method: 'DELETE' }),
    roles: (): Promise<AdminRole[]> => http.json('/auth/admin/roles'),
    createRole: (fields: NewAdminRole): Promise<AdminRole> => http.json('/auth/admin/roles', { method: 'POST', body: fields }),
    /** Adds and removes scopes of role `id` in one change; answers the role. */
    changeRoleScopes: (id: string, change: { add?: string[]; remove?: string[] }): Promise<AdminRole> =>
      http.json(`${role(id)}/scopes`, { method: 'PATCH', body: change }),
    deleteRole: (id: string): Promise<void> => http.json(role(id), { method: 'DELETE' }),
    scopes: (): Promise<ScopesPalette> => http.json('/admin/scopes'),
  };
}

/** @example const latest = await artifactStore(http).get('triage_prompt'); */
export function artifactStore(http: HttpCore) {
  return {
    list: (): Promise<ArtifactSummary[]> => http.json('/api/artifacts'),
    /** A version's content and hash (the latest without `version`). */
    get: (name: string, version?: string): Promise<Artifact> => http.json(`/api/artifacts/${segment(name)}${queryOf({ version })}`),
  };
}
