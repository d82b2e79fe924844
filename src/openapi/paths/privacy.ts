// The personal data routes: erasure by crypto-shredding (docs/privacy.md).
import { bool, int, object, operation, str, type PathItem, type Schema } from '../builders.js';

const subjectFields: Record<string, Schema> = { subject_type: { type: 'string', enum: ['user', 'record'] }, id: { type: 'string', format: 'uuid' } };
const subject = object({ ...subjectFields }, ['subject_type', 'id']);
const erased = object({ ...subjectFields, erased: bool }, ['subject_type', 'id', 'erased']);

const nullableText: Schema = { type: ['string', 'null'] };
const retentionRow = object(
  { run_id: str, workflow: str, held_at: nullableText, held_by: nullableText, hold_reason: nullableText, ended_at: nullableText, expired_at: nullableText },
  ['run_id', 'workflow', 'held_at', 'held_by', 'hold_reason', 'ended_at', 'expired_at'],
);
const holdState = object({ run_id: str, held: bool }, ['run_id', 'held']);

/** Legal hold and the retention report (docs/privacy.md). */
function retentionPaths(): Record<string, PathItem> {
  const tags = ['Privacy'];
  return {
    '/admin/runs/{id}/hold': {
      post: operation({
        operationId: 'holdRun',
        summary: 'Place a legal hold on a run: it never expires while held',
        description: "Appends `run_hold_placed` to the run's retention stream (nothing when already held). 404 for an unknown or expired run.",
        tags,
        scope: 'iam:admin',
        deploymentAdmin: true,
        path: ['id'],
        body: object({ reason: str }),
        ok: { status: 200, description: 'Held', schema: holdState },
        errors: [403, 404],
      }),
      delete: operation({
        operationId: 'releaseRunHold',
        summary: "Release a run's legal hold",
        description: 'Appends `run_hold_released`; the run expires again by its retention. 404 for an unknown or expired run, 409 when it is not held.',
        tags,
        scope: 'iam:admin',
        deploymentAdmin: true,
        path: ['id'],
        ok: { status: 200, description: 'Released', schema: holdState },
        errors: [403, 404, 409],
      }),
    },
    '/admin/retention': {
      get: operation({
        operationId: 'retentionReport',
        summary: 'What expired, when, and what is held',
        description:
          'The retention of each workflow (`spec.retention.runs`, else `SVC_RUN_RETENTION`; workflows kept forever are not listed), the held runs (newest hold first) and the expired runs (newest first), each at most `limit` (default 100, max 1000).',
        tags,
        scope: 'iam:admin',
        deploymentAdmin: true,
        query: [{ name: 'limit', schema: int }],
        ok: {
          status: 200,
          description: 'The report',
          schema: object(
            {
              policies: { type: 'array', items: object({ workflow: str, retention_seconds: int }, ['workflow', 'retention_seconds']) },
              held: { type: 'array', items: retentionRow },
              expired: { type: 'array', items: retentionRow },
            },
            ['policies', 'held', 'expired'],
          ),
        },
        errors: [400, 403],
      }),
    },
  };
}

export function privacyPaths(): Record<string, PathItem> {
  return {
    ...retentionPaths(),
    '/admin/erasure': {
      post: operation({
        operationId: 'eraseSubject',
        summary: "Erase a subject's personal data (crypto-shredding)",
        description:
          "Appends `subject_erased` and destroys the subject's data key: every read model, rebuild, export, SSE replay and audit read shows its personal values as `null` from then on; the events stay (their hashes cover the ciphertext). A user (`id`: the user id) loses its email, phone number and federated identity, so it can no longer sign in by them; a record (`id`: the record id) loses its `personal: true` fields. Erasing twice answers the same. 404 for an unknown subject. See docs/privacy.md.",
        tags: ['Privacy'],
        scope: 'iam:admin',
        deploymentAdmin: true,
        body: subject,
        ok: { status: 200, description: 'Erased', schema: erased },
        errors: [403, 404],
      }),
    },
  };
}
