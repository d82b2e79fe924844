// Who a verified request acts for; bound to the request by the verification pipeline.
export interface Principal {
  userId: string;
  groups: string[];
  scopes: string[];
  tenant?: string;
  /** Present for JWTs (absent for the dev key). */
  jti?: string;
  iat?: number;
  exp?: number;
  isDev: boolean;
}

export const ADMIN_SCOPE = 'iam:admin';
/** Reads the audit trail: its checkpoints and verification (BEYOND 3). */
export const AUDIT_READ_SCOPE = 'audit:read';
/** Reads GET /metrics on the main port (BEYOND 5). */
export const METRICS_READ_SCOPE = 'metrics:read';

export interface AccessRule {
  scope?: string | undefined;
  /** Any one of these groups suffices. */
  groups?: readonly string[] | undefined;
}

/** Scope AND group; any of several groups; `iam:admin` satisfies everything. */
export function isAllowed(principal: Principal, rule: AccessRule): boolean {
  if (principal.scopes.includes(ADMIN_SCOPE)) return true;
  if (rule.scope !== undefined && !principal.scopes.includes(rule.scope)) return false;
  if (rule.groups && rule.groups.length > 0 && !rule.groups.some((g) => principal.groups.includes(g))) return false;
  return true;
}
