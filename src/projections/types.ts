// A projection folds events into rows of one table, keyed by its primary key, with a pure evolve.
import type { JsonObject, JsonValue } from '../kernel/json.js';
import type { RecordedEvent } from '../eventstore/types.js';

export type Row = JsonObject;
export type RowKey = Record<string, JsonValue>;

/**
 * The read model is one table (created by a db/ migration, without foreign keys so it can be
 * rebuilt on its own). `evolve` is pure and deterministic: the same events in the same order give
 * the same rows, inline or in a rebuild, which is what makes a rebuild byte-identical.
 */
export interface RowProjection<R extends Row = Row> {
  readonly name: string;
  /** Bump when evolve or the table changes: the projection is rebuilt at the next start. */
  readonly version: number;
  readonly table: string;
  /** Primary key columns, in the table's order. */
  readonly key: readonly string[];
  readonly eventTypes: readonly string[];
  /**
   * Event types that are always the first event of their row (a run's run_started): a key met first
   * through one of them has no row yet, so none is loaded for it.
   */
  readonly startsRow?: readonly string[];
  /** The full keys of the rows an event touches (usually one). */
  keysOf(event: RecordedEvent): RowKey[];
  /** The row after the event; null deletes it. Values must be JSON (timestamps as ISO strings). */
  evolve(row: R | null, key: RowKey, event: RecordedEvent): R | null;
}

export function defineProjection<R extends Row>(projection: RowProjection<R>): RowProjection<R> {
  if (projection.key.length === 0) throw new Error(`Projection ${projection.name} needs a key`);
  if (!/^[a-z_][a-z0-9_]*$/.test(projection.table)) throw new Error(`Projection ${projection.name}: bad table name`);
  return Object.freeze(projection);
}
