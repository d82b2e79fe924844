// POST /admin/erasure (iam:admin; with SVC_TENANT_IDS a deployment admin): a subject's personal values erased by destroying its data key.
import { Router } from 'express';
import type { Clock } from '../kernel/clock.js';
import type { ErasureLog, Erasers, SubjectType } from './erasureLog.js';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { compileValidator } from '../kernel/validation.js';

export const SUBJECT_TYPES = ['user', 'record'] as const;

const erasureBody = compileValidator<{ subject_type: SubjectType; id: string }>({
  type: 'object',
  properties: { subject_type: { enum: SUBJECT_TYPES }, id: { type: 'string', format: 'uuid' } },
  required: ['subject_type', 'id'],
  additionalProperties: false,
});

export interface ErasureRouteDeps {
  authenticator: Authenticator;
  erasers: Erasers;
  /** Written before each erasure (SVC_ERASURE_LOG), so a restored backup is erased again. */
  log: ErasureLog;
  clock: Clock;
}

/**
 * @example
 * app.use(erasureRouter({ authenticator, erasers: { user: (id, m) => iam.eraseUser(id, m), record: ... } }));
 */
export function erasureRouter({ authenticator, erasers, log, clock }: ErasureRouteDeps): Router {
  const router = Router();
  router.post('/admin/erasure', authenticator.requireDeploymentAdmin('an erasure reaches any tenant'), async (req, res) => {
    const body = erasureBody.parse(req.body ?? {});
    const id = body.id.toLowerCase();
    await log.record({ subject_type: body.subject_type, id, erased_at: clock.now().toISOString() });
    await erasers[body.subject_type](id, requestMetadata(req));
    res.json({ subject_type: body.subject_type, id, erased: true });
  });
  return router;
}
