// The personal data routes: erasure by crypto-shredding (docs/privacy.md).
import { bool, object, operation, type PathItem, type Schema } from '../builders.js';

const subjectFields: Record<string, Schema> = { subject_type: { type: 'string', enum: ['user', 'record'] }, id: { type: 'string', format: 'uuid' } };
const subject = object({ ...subjectFields }, ['subject_type', 'id']);
const erased = object({ ...subjectFields, erased: bool }, ['subject_type', 'id', 'erased']);

export function privacyPaths(): Record<string, PathItem> {
  return {
    '/admin/erasure': {
      post: operation({
        operationId: 'eraseSubject',
        summary: "Erase a subject's personal data (crypto-shredding)",
        description:
          "Appends `subject_erased` and destroys the subject's data key: every read model, rebuild, export, SSE replay and audit read shows its personal values as `null` from then on; the events stay (their hashes cover the ciphertext). A user (`id`: the user id) loses its email, phone number and federated identity, so it can no longer sign in by them; a record (`id`: the record id) loses its `personal: true` fields. Erasing twice answers the same. 404 for an unknown subject. See docs/privacy.md.",
        tags: ['Privacy'],
        scope: 'iam:admin',
        body: subject,
        ok: { status: 200, description: 'Erased', schema: erased },
        errors: [403, 404],
      }),
    },
  };
}
