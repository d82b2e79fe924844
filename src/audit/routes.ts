// /admin/audit: verify the hash chains and checkpoints (scope audit:read, or iam:admin).
import { Router } from 'express';
import type { Pool } from '../db/pool.js';
import type { Authenticator } from '../http/authenticator.js';
import { AUDIT_READ_SCOPE } from '../kernel/access.js';
import { verifyAuditLog } from './verify.js';

export interface AuditRouteDeps {
  pool: Pool;
  authenticator: Authenticator;
}

/**
 * @example
 * app.use(auditRouter({ pool, authenticator }));
 */
export function auditRouter(deps: AuditRouteDeps): Router {
  const router = Router();
  const read = deps.authenticator.require({ scope: AUDIT_READ_SCOPE });

  router.get('/admin/audit/verify', read, async (_req, res) => {
    res.json(await verifyAuditLog(deps.pool));
  });

  return router;
}
