// Reading the log for auditors (BEYOND 3.2): the query's filters, opaque cursors over the gated
// (transaction_id, global_position) order, and an event as the audit API shows it.
import { canonicalTime } from '../eventstore/canonical.js';
import type { LogFilter } from '../eventstore/sql.js';
import { cursorOf, LOG_START, type GlobalCursor, type RecordedEvent } from '../eventstore/types.js';
import { BadRequestError } from '../kernel/errors.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1000;

/** What a request of GET /admin/events asks for. */
export interface LogQuery {
  filter: LogFilter;
  after: GlobalCursor;
  limit: number;
}

const CURSOR_TEXT = /^(\d{1,20})\.(\d{1,19})$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const FILTER_KEYS = ['stream_id', 'stream_type', 'type', 'actor', 'since', 'until', 'after'];
const MAX_XID8 = 2n ** 64n - 1n;

/**
 * A cursor names one event's place in the gated order. Opaque to callers (base64url), so its
 * content may change; it is only ever compared, never computed by a client.
 */
export function encodeCursor(cursor: GlobalCursor): string {
  return Buffer.from(`${cursor.transactionId}.${cursor.globalPosition}`, 'utf8').toString('base64url');
}

export function decodeCursor(text: string, name = 'after'): GlobalCursor {
  const match = /^[A-Za-z0-9_-]{1,64}$/.test(text) ? CURSOR_TEXT.exec(Buffer.from(text, 'base64url').toString('utf8')) : null;
  const position = match ? Number(match[2]) : NaN;
  if (!match || !Number.isSafeInteger(position) || BigInt(match[1]!) > MAX_XID8)
    throw new BadRequestError(`${name} is not a cursor of this log`, { parameter: name });
  return { transactionId: BigInt(match[1]!).toString(), globalPosition: position };
}

/**
 * The query string of GET /admin/events (`isPaged`: with `limit`) and of its stream (where
 * `Last-Event-ID` stands in for `after`): every filter checked, any mistake a 400.
 */
export function parseLogQuery(query: Record<string, unknown>, options: { isPaged: boolean; lastEventId?: string | undefined }): LogQuery {
  const known = options.isPaged ? [...FILTER_KEYS, 'limit'] : FILTER_KEYS;
  const unknown = Object.keys(query).filter((key) => !known.includes(key));
  if (unknown.length > 0) throw new BadRequestError(`unknown parameter ${unknown.join(', ')}`, { parameters: unknown });
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > 512)
      throw new BadRequestError(`${name} must be given once, as non-empty text`, { parameter: name });
    return value;
  };
  const list = (name: string) =>
    text(name)
      ?.split(',')
      .map((item) => item.trim());
  const eventTypes = list('type');
  if (eventTypes?.some((type) => type.length === 0)) throw new BadRequestError('type is a comma list of event types', { parameter: 'type' });
  const limitText = text('limit');
  const limit = limitText === undefined ? DEFAULT_PAGE : Number(limitText);
  if (!/^\d{1,4}$/.test(limitText ?? '1') || limit < 1 || limit > MAX_PAGE)
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_PAGE}`, { parameter: 'limit' });
  const after = text('after') ?? options.lastEventId;
  return {
    filter: {
      streamId: text('stream_id'),
      streamTypes: text('stream_type') === undefined ? undefined : [text('stream_type')!],
      eventTypes,
      actorId: text('actor'),
      since: isoTime(text('since'), 'since'),
      until: isoTime(text('until'), 'until'),
    },
    after: after === undefined ? LOG_START : decodeCursor(after, text('after') === undefined ? 'Last-Event-ID' : 'after'),
    limit,
  };
}

function isoTime(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!ISO_TIME.test(value) || Number.isNaN(Date.parse(value))) throw new BadRequestError(`${name} must be an ISO 8601 time`, { parameter: name });
  // One reading for SQL and for the live feed's in-memory check (PostgreSQL would take a time without
  // a zone in its session's zone): JavaScript's, to the millisecond.
  return new Date(value).toISOString();
}

/** Event data keys whose value is a secret: a password's bcrypt hash, an OAuth client's secret. */
const SECRET_KEYS: ReadonlySet<string> = new Set(['passwordHash', 'client_secret']);

/** `value` with every string under a secret key replaced by `***` (the federation routes' mark), and whether one was. */
function hideSecrets(value: JsonValue): { value: JsonValue; isHidden: boolean } {
  if (Array.isArray(value)) {
    const items = value.map(hideSecrets);
    return { value: items.map((item) => item.value), isHidden: items.some((item) => item.isHidden) };
  }
  if (value === null || typeof value !== 'object') return { value, isHidden: false };
  let isHidden = false;
  const shown: JsonObject = {};
  for (const [key, item] of Object.entries(value)) {
    const inner = SECRET_KEYS.has(key) && typeof item === 'string' ? { value: '***', isHidden: true } : hideSecrets(item);
    shown[key] = inner.value;
    isHidden ||= inner.isHidden;
  }
  return { value: shown, isHidden };
}

/**
 * An event as the audit API shows it. `recorded_at` is in the hashed shape (six fraction digits), so
 * a reader can recompute `hash` from exactly what it was given (docs/audit.md), except for an event
 * whose data held a secret: that is shown as `***` and the event is marked `redacted` (its hash is
 * still checked by GET /admin/audit/verify, which reads the stored event).
 */
export function presentLogEvent(event: RecordedEvent): JsonObject {
  const { value: data, isHidden } = hideSecrets(event.data);
  return {
    cursor: encodeCursor(cursorOf(event)),
    global_position: event.globalPosition,
    stream_id: event.streamId,
    stream_type: event.streamType,
    stream_position: event.streamPosition,
    type: event.type,
    data,
    metadata: event.metadata,
    recorded_at: canonicalTime(event.recordedAt),
    hash: event.hash,
    ...(isHidden ? { redacted: true } : {}),
  };
}
