// The administration reads the console needs beyond runs: users and roles
// (`/auth/admin`, `iam:admin`), the scopes palette (`/admin/scopes`, deployment admins), the audit
// log's verification (`audit:read`) and the artifacts (`artifacts:read`).
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

/** @example const users = await iamAdmin(http).users({ limit: 50 }); */
export function iamAdmin(http: HttpCore) {
  return {
    users: (page: { limit?: number; offset?: number } = {}): Promise<AdminUser[]> => http.json(`/auth/admin/users${queryOf(page)}`),
    roles: (): Promise<AdminRole[]> => http.json('/auth/admin/roles'),
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
