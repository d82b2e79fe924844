// Filters of global reads of the log: as SQL for the readers, in memory for events a live feed hands over.
import type { EventMetadata, RecordedEvent } from './types.js';

/** Restricts a global read; every field given must hold (an empty filter takes every event). */
export interface LogFilter {
  streamTypes?: readonly string[] | undefined;
  eventTypes?: readonly string[] | undefined;
  streamId?: string | undefined;
  /** `metadata.actor.id` (or, in events older than BEYOND 3.1, `metadata.actor` itself). */
  actorId?: string | undefined;
  /** ISO times: recorded at or after `since`, before `until`. */
  since?: string | undefined;
  until?: string | undefined;
}

/**
 * The filter as SQL with parameters from `$first` on. Its expressions are the ones db/0018 indexes;
 * NULL parameters fold away when the (unnamed) statement is planned, so each index serves alone.
 */
export function filterSql(filter: LogFilter, first: number): { sql: string; values: unknown[] } {
  const p = (n: number) => `$${first + n}`;
  return {
    sql: `AND (${p(0)}::text[] IS NULL OR stream_type = ANY(${p(0)}::text[]))
       AND (${p(1)}::text[] IS NULL OR type = ANY(${p(1)}::text[]))
       AND (${p(2)}::text IS NULL OR stream_id = ${p(2)}::text)
       AND (${p(3)}::text IS NULL OR ${ACTOR_ID_SQL} = ${p(3)}::text)
       AND (${p(4)}::timestamptz IS NULL OR recorded_at >= ${p(4)}::timestamptz)
       AND (${p(5)}::timestamptz IS NULL OR recorded_at < ${p(5)}::timestamptz)`,
    values: [
      filter.streamTypes ?? null,
      filter.eventTypes ?? null,
      filter.streamId ?? null,
      filter.actorId ?? null,
      filter.since ?? null,
      filter.until ?? null,
    ],
  };
}

/** The actor's id, as the expression index of db/0018 has it. */
const ACTOR_ID_SQL = `coalesce(metadata->'actor'->>'id', metadata->>'actor')`;

/** The filter in memory, as filterSql says it (for events a live feed hands over). */
export function matchesLogFilter(event: RecordedEvent, filter: LogFilter): boolean {
  if (filter.streamTypes && !filter.streamTypes.includes(event.streamType)) return false;
  if (filter.eventTypes && !filter.eventTypes.includes(event.type)) return false;
  if (filter.streamId !== undefined && event.streamId !== filter.streamId) return false;
  if (filter.actorId !== undefined && actorIdOf(event.metadata) !== filter.actorId) return false;
  const at = Date.parse(event.recordedAt);
  if (filter.since !== undefined && at < Date.parse(filter.since)) return false;
  if (filter.until !== undefined && at >= Date.parse(filter.until)) return false;
  return true;
}

function actorIdOf(metadata: EventMetadata): string | undefined {
  const actor = metadata.actor;
  if (typeof actor === 'string') return actor;
  const id = actor && typeof actor === 'object' && !Array.isArray(actor) ? actor.id : undefined;
  return typeof id === 'string' ? id : undefined;
}
