// Workflow version admin (`/admin/workflows`, `iam:admin`): every loaded version, toggle, fork.
import type { HttpCore } from './http.js';

export interface WorkflowVersion {
  schema_version: string;
  enabled: boolean;
  trigger_path: string;
  trigger_method: string;
  description?: string;
}

/**
 * @example
 * const versions = workflowVersions(http);
 * await versions.fork('trip', 'v1', 'v2'); // written disabled
 * await versions.toggle('trip', 'v2');
 */
export function workflowVersions(http: HttpCore) {
  const path = (name: string, version: string) => `/admin/workflows/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;
  return {
    /** Every loaded version of every workflow, enabled or not. */
    list: (): Promise<Record<string, WorkflowVersion[]>> => http.json('/admin/workflows'),
    /** Enables a disabled version, disables an enabled one; answers the new state. */
    toggle: (name: string, version: string): Promise<{ name: string; schema_version: string; enabled: boolean }> =>
      http.json(`${path(name, version)}/toggle`, { method: 'PATCH' }),
    /** A copy of `version` as `newVersion` (a new file in the project), disabled. */
    fork: (name: string, version: string, newVersion: string): Promise<{ name: string; source_version: string; new_version: string; file: string }> =>
      http.json(`${path(name, version)}/fork`, { method: 'POST', body: { new_version: newVersion } }),
  };
}
