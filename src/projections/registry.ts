// The projections a process knows, applied inline in every append transaction.
import type { Queryable } from '../db/pool.js';
import type { InlineProjector, ProjectorPass } from '../eventstore/transaction.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { RowFold } from './fold.js';
import { deleteRows, loadRows, readTableShape, upsertRows, type TableShape } from './tableSql.js';
import type { Row, RowKey, RowProjection } from './types.js';

export const LIVE_SCHEMA = 'public';

export class ProjectionRegistry implements InlineProjector {
  private readonly projections = new Map<string, RowProjection>();
  private readonly byEventType = new Map<string, RowProjection[]>();
  private readonly shapes = new Map<string, TableShape>();

  register(projection: RowProjection): void {
    if (this.projections.has(projection.name)) throw new Error(`Projection ${projection.name} is registered twice`);
    for (const other of this.projections.values()) {
      if (other.table === projection.table) throw new Error(`Projections ${other.name} and ${projection.name} share table ${projection.table}`);
    }
    this.projections.set(projection.name, projection);
    for (const type of projection.eventTypes) {
      const list = this.byEventType.get(type) ?? [];
      list.push(projection);
      this.byEventType.set(type, list);
    }
  }

  list(): RowProjection[] {
    return [...this.projections.values()];
  }

  get(name: string): RowProjection | undefined {
    return this.projections.get(name);
  }

  handlesAny(types: readonly string[]): boolean {
    return types.some((t) => this.byEventType.has(t));
  }

  /**
   * Starts applying events about to be inserted in `client`'s transaction: the locking reads of the
   * rows they will touch are sent now, behind the INSERT on the pipelined connection, so they cost no
   * round trip of their own. The pass then folds the events as inserted (their positions and times).
   */
  begin(client: Queryable, upcoming: readonly RecordedEvent[]): ProjectorPass {
    const ahead = new Map<RowProjection, Promise<SeedRows>>();
    for (const [projection, events] of this.touchedBy(upcoming)) {
      const shape = this.shapes.get(projection.name);
      // A table not used yet in this process: its shape is read first, its rows when applying.
      if (!shape) continue;
      const keys = new RowFold(projection).unknownKeys(events);
      const rows = loadRows(client, shape, keys, true).then((found) => ({ keys, rows: found }));
      // The INSERT ahead of it may fail (then this read fails too): that error is the one reported.
      rows.catch(() => undefined);
      ahead.set(projection, rows);
    }
    return { apply: (inserted) => this.applyInserted(client, inserted, ahead) };
  }

  /** Folds the inserted events into every table they touch and sends the writes (all before awaiting one). */
  private async applyInserted(
    client: Queryable,
    events: readonly RecordedEvent[],
    ahead: ReadonlyMap<RowProjection, Promise<SeedRows>>,
  ): Promise<{ written: Promise<void> }> {
    const writes: Promise<void>[] = [];
    for (const [projection, projectionEvents] of this.touchedBy(events)) {
      const shape = await this.shapeOf(client, projection);
      writes.push(...(await foldIntoTable(client, projection, shape, projectionEvents, await ahead.get(projection))));
    }
    const written = Promise.all(writes).then(() => undefined);
    written.catch(() => undefined);
    return { written };
  }

  private touchedBy(events: readonly RecordedEvent[]): Map<RowProjection, RecordedEvent[]> {
    const touched = new Map<RowProjection, RecordedEvent[]>();
    for (const event of events) {
      for (const projection of this.byEventType.get(event.type) ?? []) {
        const list = touched.get(projection) ?? [];
        list.push(event);
        touched.set(projection, list);
      }
    }
    return touched;
  }

  /** Forgets cached table shapes (after a rebuild swapped a table or a migration changed one). */
  forgetShapes(): void {
    this.shapes.clear();
  }

  private async shapeOf(client: Queryable, projection: RowProjection): Promise<TableShape> {
    let shape = this.shapes.get(projection.name);
    if (!shape) {
      shape = await readTableShape(client, LIVE_SCHEMA, projection.table, projection.key);
      this.shapes.set(projection.name, shape);
    }
    return shape;
  }
}

/** Rows read for a fold: the keys asked for and the rows the table holds of them. */
interface SeedRows {
  keys: RowKey[];
  rows: Row[];
}

/**
 * Folds the events into the rows they touch (those of `seed`, read ahead, and any other read and
 * locked now) and sends the writes; answers them, to await before the commit.
 */
async function foldIntoTable(
  client: Queryable,
  projection: RowProjection,
  shape: TableShape,
  events: readonly RecordedEvent[],
  seed?: SeedRows,
): Promise<Promise<void>[]> {
  const fold = new RowFold(projection);
  if (seed) fold.seed(seed.keys, seed.rows);
  const keys = fold.unknownKeys(events);
  fold.seed(keys, await loadRows(client, shape, keys, true));
  for (const event of events) fold.apply(event);
  const { upserts, deletes } = fold.takeChanges();
  return [upsertRows(client, shape, upserts), deleteRows(client, shape, deletes)];
}

/** Loads (and locks) the touched rows, folds the events, writes the result back. */
export async function applyToTable(client: Queryable, projection: RowProjection, shape: TableShape, events: readonly RecordedEvent[]): Promise<void> {
  await Promise.all(await foldIntoTable(client, projection, shape, events));
}
