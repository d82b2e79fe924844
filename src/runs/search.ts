// GET /api/runs query parameters: filters, limit/offset and the opaque keyset cursor (X-Next-Cursor).
import { ADMIN_SCOPE, type Principal } from '../kernel/access.js';
import { BadRequestError } from '../kernel/errors.js';
import { compileValidator, integerParam } from '../kernel/validation.js';
import type { RunPosition, RunSearch } from './queries.js';
import { RUN_STATUSES } from './state.js';

export interface RunSearchQuery {
  workflow?: string;
  status?: string;
  created_after?: string;
  created_before?: string;
  parent_run_id?: string;
  limit?: string;
  offset?: string;
  cursor?: string;
}
const PARAMETERS = ['workflow', 'status', 'created_after', 'created_before', 'parent_run_id', 'limit', 'offset', 'cursor'] as const;
const searchQuery = compileValidator<RunSearchQuery>(
  { type: 'object', properties: Object.fromEntries(PARAMETERS.map((name) => [name, { type: 'string' }])), additionalProperties: false },
  'query',
);

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const MAX_OFFSET = 1_000_000_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// RFC 3339 (a date alone means its midnight UTC: sessions are UTC); PostgreSQL still rejects a 30 February (400).
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
const KNOWN_STATUSES: ReadonlySet<string> = new Set(RUN_STATUSES);

/** The caller's search: their own runs in their tenant (every run of it for iam:admin), filtered and paged. */
export function parseRunSearch(rawQuery: unknown, principal: Principal): RunSearch {
  const query = searchQuery.parse(rawQuery);
  return {
    principalId: principal.scopes.includes(ADMIN_SCOPE) ? null : principal.userId,
    tenant: principal.tenant ?? null,
    workflow: query.workflow,
    statuses: query.status === undefined ? RUN_STATUSES : parseStatuses(query.status),
    createdAfter: timestamp(query.created_after, 'created_after'),
    createdBefore: timestamp(query.created_before, 'created_before'),
    parentRunId: query.parent_run_id === undefined ? undefined : uuid(query.parent_run_id, 'parent_run_id'),
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: count(query.limit, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT),
    offset: count(query.offset, 'offset', 0, 0, MAX_OFFSET),
  };
}

/** The cursor after a page's last run: base64url of `[created_at, id]` (opaque to callers). */
export function encodeCursor(position: RunPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

function decodeCursor(cursor: string): RunPosition {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const [createdAt, id] = Array.isArray(decoded) && decoded.length === 2 ? (decoded as unknown[]) : [];
  if (typeof createdAt !== 'string' || !TIMESTAMP.test(createdAt) || typeof id !== 'string' || !UUID.test(id)) {
    throw new BadRequestError('cursor is not a cursor this service gave (X-Next-Cursor)', { parameter: 'cursor' });
  }
  return { createdAt, id };
}

function parseStatuses(list: string): string[] {
  const statuses = [...new Set(list.split(',').map((s) => s.trim()))];
  const unknown = statuses.filter((s) => !KNOWN_STATUSES.has(s));
  if (unknown.length) throw new BadRequestError(`status: unknown ${unknown.map((s) => `'${s}'`).join(', ')}; one of ${RUN_STATUSES.join(', ')}`);
  return statuses;
}

function timestamp(value: string | undefined, name: string): string | undefined {
  if (value !== undefined && !TIMESTAMP.test(value)) throw new BadRequestError(`${name} must be an RFC 3339 timestamp (or a date)`, { parameter: name });
  return value;
}

function uuid(value: string, name: string): string {
  if (!UUID.test(value)) throw new BadRequestError(`${name} must be a run id (uuid)`, { parameter: name });
  return value;
}

function count(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  try {
    return integerParam(value, name, fallback, min, max);
  } catch {
    throw new BadRequestError(`${name} must be an integer from ${min} to ${max}`, { parameter: name });
  }
}
