// What the administration pages need of the token's scopes; the API refuses the rest anyway.
import type { Identity } from '../../src/client/index.js';
import { hasScope } from './session.js';

/** Scopes of the service itself (not a model's `<model>:read`). */
const SERVICE_READ_SCOPES = new Set(['runs:read', 'audit:read', 'artifacts:read', 'metrics:read']);

export function adminAbilities(identity: Identity) {
  const isAdmin = hasScope(identity, 'iam:admin');
  return {
    /** Schedules and the scopes palette serve every tenant: deployment admins only. */
    deploymentAdmin: isAdmin && !identity.tenant,
    manageIam: isAdmin,
    readAudit: hasScope(identity, 'audit:read'),
    readArtifacts: hasScope(identity, 'artifacts:read'),
    /** Some model's read scope (`<model>:read` by default). */
    readModels: isAdmin || identity.scopes.some((scope) => scope.endsWith(':read') && !SERVICE_READ_SCOPES.has(scope)),
  };
}
