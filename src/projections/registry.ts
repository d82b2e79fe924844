// The projections a process knows, applied inline in every append transaction.
import type { Queryable } from '../db/pool.js';
import type { InlineProjector } from '../eventstore/store.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { RowFold } from './fold.js';
import { deleteRows, loadRows, readTableShape, upsertRows, type TableShape } from './tableSql.js';
import type { RowProjection } from './types.js';

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

  /** Applies the events to every projection that handles them, inside the caller's transaction. */
  async apply(client: Queryable, events: readonly RecordedEvent[]): Promise<void> {
    const touched = new Map<RowProjection, RecordedEvent[]>();
    for (const event of events) {
      for (const projection of this.byEventType.get(event.type) ?? []) {
        const list = touched.get(projection) ?? [];
        list.push(event);
        touched.set(projection, list);
      }
    }
    for (const [projection, projectionEvents] of touched) {
      await applyToTable(client, projection, await this.shapeOf(client, projection), projectionEvents);
    }
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

/** Loads (and locks) the touched rows, folds the events, writes the result back. */
export async function applyToTable(client: Queryable, projection: RowProjection, shape: TableShape, events: readonly RecordedEvent[]): Promise<void> {
  const fold = new RowFold(projection);
  const keys = fold.unknownKeys(events);
  fold.seed(keys, await loadRows(client, shape, keys, true));
  for (const event of events) fold.apply(event);
  const { upserts, deletes } = fold.takeChanges();
  await upsertRows(client, shape, upserts);
  await deleteRows(client, shape, deletes);
}
