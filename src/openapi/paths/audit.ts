// The audit routes: hash chain and checkpoint verification, the signed checkpoints.
import { anyObject, bool, int, object, operation, str, type PathItem, type Schema } from '../builders.js';

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

const logEvent = object(
  {
    cursor: { type: 'string', description: 'Opaque: resume after this event with `after` (or `Last-Event-ID` on the stream)' },
    global_position: int,
    stream_id: str,
    stream_type: str,
    stream_position: int,
    type: str,
    data: anyObject,
    metadata: { ...anyObject, description: '`actor {type, id}`, `source`, `request_id` (when a request caused it), `tenant` (when set)' },
    recorded_at: { type: 'string', description: 'ISO 8601 UTC with six fraction digits: the shape the hash covers' },
    hash: { type: ['string', 'null'], description: 'Hex SHA-256 chaining the event to its stream' },
    redacted: {
      type: 'boolean',
      const: true,
      description: 'Present when a secret of `data` (a password hash, an OAuth client secret) is shown as `***`: `hash` cannot be recomputed from this answer',
    },
  },
  ['cursor', 'global_position', 'stream_id', 'stream_type', 'stream_position', 'type', 'data', 'metadata', 'recorded_at', 'hash'],
);

// A date alone is taken too (midnight UTC), so no `format: date-time`.
const isoTime: Schema = str;
const logFilters: { name: string; schema: Schema; description?: string }[] = [
  { name: 'stream_id', schema: str },
  { name: 'stream_type', schema: str },
  { name: 'type', schema: str, description: 'Event types, a comma list' },
  { name: 'actor', schema: str, description: "The actor's id (`metadata.actor.id`)" },
  { name: 'since', schema: isoTime, description: 'Recorded at or after (ISO 8601)' },
  { name: 'until', schema: isoTime, description: 'Recorded before (ISO 8601)' },
  { name: 'after', schema: str, description: 'A cursor: the events after that one' },
];

const tags = ['Audit'];
const scope = 'audit:read';

/** The log itself: pages and the stream. */
function logPaths(): Record<string, PathItem> {
  return {
    '/admin/events': {
      get: operation({
        operationId: 'listLogEvents',
        summary: 'Read the event log, in the gated global order',
        description:
          "Pages follow (transaction_id, global_position) behind the snapshot gate: no event is ever skipped or repeated, under any concurrent writes. `next_cursor` is null at the head (then resume from the last event's `cursor`). Filters combine. 400 on a bad filter or cursor. See docs/audit.md.",
        tags,
        scope,
        deploymentAdmin: true,
        query: [...logFilters, { name: 'limit', schema: { type: 'integer', minimum: 1, maximum: 1000 }, description: 'Default 100' }],
        ok: {
          status: 200,
          description: 'A page of events',
          schema: object({ events: { type: 'array', items: logEvent }, next_cursor: { type: ['string', 'null'] } }, ['events', 'next_cursor']),
        },
        errors: [400, 403],
      }),
    },
    '/admin/events/stream': {
      get: operation({
        operationId: 'streamLogEvents',
        summary: 'The event log over SSE: replay, then live; resume with Last-Event-ID',
        description: 'The filters of `/admin/events`; each frame is `id: <cursor>`, `event: <type>`, `data: <event as /admin/events shows it>`.',
        tags,
        scope,
        deploymentAdmin: true,
        query: logFilters,
        headers: [{ name: 'Last-Event-ID', schema: str, description: 'A cursor: resume exactly after that event (`after` wins when both are given)' }],
        ok: {
          status: 200,
          description: 'Server-Sent Events: `id: <cursor>`, `event: <type>`, `data: <event JSON>`',
          schema: str,
          contentType: 'text/event-stream',
        },
        errors: [400, 403],
      }),
    },
  };
}

export function auditPaths(): Record<string, PathItem> {
  return {
    ...logPaths(),
    '/admin/audit/verify': {
      get: operation({
        operationId: 'verifyAudit',
        summary: 'Recompute every hash chain and checkpoint',
        description: 'Walks every stream in order; `first_broken` names the first event (or checkpoint) that does not verify. See docs/audit.md.',
        tags,
        scope,
        deploymentAdmin: true,
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
        deploymentAdmin: true,
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
        deploymentAdmin: true,
        ok: { status: 201, description: 'The checkpoint', schema: object({ checkpoint: { oneOf: [checkpoint, { type: 'null' }] } }, ['checkpoint']) },
        extraResponses: {
          200: { description: 'Nothing new to checkpoint', content: { 'application/json': { schema: object({ checkpoint: { type: 'null' } }) } } },
        },
        errors: [403],
      }),
    },
  };
}
