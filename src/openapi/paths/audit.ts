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

const checkpoint = object(
  {
    sequence: int,
    horizon: object({ transaction_id: str, global_position: int }, ['transaction_id', 'global_position']),
    events: int,
    digest: str,
    previous_digest: str,
    signed_at: str,
    kid: str,
    jws: str,
  },
  ['sequence', 'horizon', 'events', 'digest', 'previous_digest', 'signed_at', 'kid', 'jws'],
);
const listed = { ...checkpoint, properties: { ...checkpoint.properties, global_position: int, hash: str } };

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
    '/admin/audit/checkpoints': {
      get: operation({
        operationId: 'listAuditCheckpoints',
        summary: 'The signed checkpoints, oldest first',
        description:
          'Each commits to every event up to its gated horizon; `jws` verifies with `/auth/jwks.json`. Pages: `after` a sequence, `limit` (default 100, max 1000).',
        tags,
        scope,
        query: [
          { name: 'after', schema: int },
          { name: 'limit', schema: int },
        ],
        ok: {
          status: 200,
          description: 'A page of checkpoints; next_after is null at the end',
          schema: object({ checkpoints: { type: 'array', items: listed }, next_after: { type: ['integer', 'null'] } }, ['checkpoints', 'next_after']),
        },
        errors: [400, 403],
      }),
      post: operation({
        operationId: 'writeAuditCheckpoint',
        summary: 'Sign a checkpoint now',
        description: '201 with the checkpoint written; 200 with `checkpoint: null` when no event arrived since the last one.',
        tags,
        scope: 'iam:admin',
        ok: { status: 201, description: 'The checkpoint', schema: object({ checkpoint: { oneOf: [checkpoint, { type: 'null' }] } }, ['checkpoint']) },
        extraResponses: {
          200: { description: 'Nothing new to checkpoint', content: { 'application/json': { schema: object({ checkpoint: { type: 'null' } }) } } },
        },
        errors: [403],
      }),
    },
  };
}
