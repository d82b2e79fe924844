// POST /admin/erasure (iam:admin): a subject's personal values erased by destroying its data key.
import { Router } from 'express';
import type { EventMetadata } from '../eventstore/types.js';
import type { Authenticator } from '../http/authenticator.js';
import { requestMetadata } from '../http/context.js';
import { ADMIN_SCOPE } from '../kernel/access.js';
import { compileValidator } from '../kernel/validation.js';

export const SUBJECT_TYPES = ['user', 'record'] as const;
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** What erases each kind of subject: its feature appends `subject_erased` and destroys the key. */
export type Erasers = Readonly<Record<SubjectType, (id: string, metadata: EventMetadata) => Promise<void>>>;

const erasureBody = compileValidator<{ subject_type: SubjectType; id: string }>({
  type: 'object',
  properties: { subject_type: { enum: SUBJECT_TYPES }, id: { type: 'string', format: 'uuid' } },
  required: ['subject_type', 'id'],
  additionalProperties: false,
});

export interface ErasureRouteDeps {
  authenticator: Authenticator;
  erasers: Erasers;
}

/**
 * @example
 * app.use(erasureRouter({ authenticator, erasers: { user: (id, m) => iam.eraseUser(id, m), record: ... } }));
 */
export function erasureRouter({ authenticator, erasers }: ErasureRouteDeps): Router {
  const router = Router();
  router.post('/admin/erasure', authenticator.require({ scope: ADMIN_SCOPE }), async (req, res) => {
    const body = erasureBody.parse(req.body ?? {});
    const id = body.id.toLowerCase();
    await erasers[body.subject_type](id, requestMetadata(req));
    res.json({ subject_type: body.subject_type, id, erased: true });
  });
  return router;
}
