// The audit routes: hash chain and checkpoint verification, the signed checkpoints.
import { bool, int, object, operation, str, type PathItem, type Schema } from '../builders.js';

const broken: Schema = {
  oneOf: [object({ stream_id: str, stream_position: int, reason: str }, ['stream_id', 'stream_position', 'reason']), { type: 'null' }],
};
const report = object({ ok: bool, events_checked: int, checkpoints_checked: int, first_broken: broken }, [
  'ok',
  'events_checked',
  'checkpoints_checked',
  'first_broken',
]);

export function auditPaths(): Record<string, PathItem> {
  const tags = ['Audit'];
  const scope = 'audit:read';
  return {
    '/admin/audit/verify': {
      get: operation({
        operationId: 'verifyAudit',
        summary: 'Recompute every hash chain and checkpoint',
        description: 'Walks every stream in order; `first_broken` names the first event (or checkpoint) that does not verify. See docs/audit.md.',
        tags,
        scope,
        ok: { status: 200, description: 'The verification report', schema: report },
        errors: [403],
      }),
    },
  };
}
