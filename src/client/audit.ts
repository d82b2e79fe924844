// The audit calls (`audit:read`): the event log a page at a time, every page to the head, or as a
// live stream that resumes by Last-Event-ID after a drop.
import type { LogEvent, LogEventPage } from '../contract/types.js';
import { SvcRequestError } from './errors.js';
import { queryOf, readBody, readEvents, type HttpCore } from './http.js';

/** The filters of `GET /admin/events`; every one given must hold. */
export interface LogQuery {
  streamId?: string;
  streamType?: string;
  /** One event type or several (any of them). */
  type?: string | string[];
  /** The actor's id. */
  actor?: string;
  /** Recorded at or after / before this time. */
  since?: string | Date;
  until?: string | Date;
  /** A cursor (an event's `cursor`, a page's `next_cursor`): the events after it. */
  after?: string;
  /** Events per page: 1 to 1000 (default 100); pages only. */
  limit?: number;
}

export interface AuditVerification {
  ok: boolean;
  events_checked: number;
  checkpoints_checked: number;
  first_broken: { stream_id: string; stream_position: number; reason: string } | null;
}

export interface LogStreamOptions {
  signal?: AbortSignal;
  /** Reconnections after a dropped stream before giving up (default 5). */
  maxReconnects?: number;
}

function logQuery(query: LogQuery, isPaged: boolean): string {
  return queryOf({
    stream_id: query.streamId,
    stream_type: query.streamType,
    type: Array.isArray(query.type) ? query.type.join(',') : query.type,
    actor: query.actor,
    since: query.since,
    until: query.until,
    after: query.after,
    limit: isPaged ? query.limit : undefined,
  });
}

/**
 * @example
 * const audit = auditLog(http);
 * for await (const event of audit.iterate({ actor: userId, since: '2026-11-01' })) console.log(event.type);
 */
export function auditLog(http: HttpCore) {
  const events = (query: LogQuery = {}): Promise<LogEventPage> => http.json(`/admin/events${logQuery(query, true)}`);
  return {
    /** One page in the gated log order (nothing skipped or repeated under concurrent writes). */
    events,
    /** Every hash chain and checkpoint recomputed (`GET /admin/audit/verify`). */
    verify: (): Promise<AuditVerification> => http.json('/admin/audit/verify'),
    /** Every matching event up to the head, page after page. */
    async *iterate(query: LogQuery = {}): AsyncGenerator<LogEvent> {
      for (let after = query.after; ;) {
        const page = await events({ ...query, ...(after !== undefined ? { after } : {}) });
        yield* page.events;
        if (page.next_cursor === null) return;
        after = page.next_cursor;
      }
    },
    /** Replay, then live, until `signal` aborts; a dropped stream resumes after the last event (Last-Event-ID). */
    async *stream(query: Omit<LogQuery, 'limit'> = {}, options: LogStreamOptions = {}): AsyncGenerator<LogEvent> {
      let last = query.after;
      let reconnects = 0;
      for (;;) {
        const response = await http.send(`/admin/events/stream${logQuery({ ...query, after: undefined }, false)}`, {
          headers: { accept: 'text/event-stream', ...(last !== undefined ? { 'last-event-id': last } : {}) },
          signal: options.signal,
        });
        if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
        try {
          for await (const message of readEvents(response)) {
            const event = JSON.parse(message.data) as LogEvent;
            last = event.cursor;
            reconnects = 0;
            yield event;
          }
        } catch (error) {
          if (options.signal?.aborted) throw error;
        }
        if (options.signal?.aborted) return;
        if (++reconnects > (options.maxReconnects ?? 5)) throw new Error(`The audit log stream dropped ${reconnects} times`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 100 * 2 ** reconnects)));
      }
    },
  };
}
