// Model records as events on `record-<model>-<id>` streams; the model's table is their inline projection.
import { runCommand } from '../eventstore/command.js';
import type { EventStore, EventTransaction } from '../eventstore/store.js';
import type { AppendToStream, EventMetadata, NewEvent, RecordedEvent } from '../eventstore/types.js';
import { NotFoundError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { defineProjection, type Row, type RowProjection } from '../projections/types.js';
import type { ModelDefinition } from './definition.js';
import { TENANT_COLUMN } from './tables.js';

export const recordStream = (model: ModelDefinition, id: string) => `record-${model.slug}-${id}`;
const RECORD_EVENTS = ['RecordCreated', 'RecordUpdated', 'RecordDeleted'];

/** One projection per model table; events name their table, so each projection takes only its own. */
export function recordProjection(table: string, primaryKey: string): RowProjection {
  return defineProjection({
    name: `records:${table}`,
    version: 1,
    table,
    key: [primaryKey],
    eventTypes: RECORD_EVENTS,
    // A created record's row owes nothing to what the table held (its id is new, and evolve starts
    // it afresh): no row is loaded for it.
    startsRow: ['RecordCreated'],
    keysOf: (event: RecordedEvent) => ((event.data as JsonObject).table === table ? [{ [primaryKey]: (event.data as JsonObject).id! }] : []),
    evolve(row: Row | null, key, event): Row | null {
      const data = event.data as JsonObject;
      switch (event.type) {
        case 'RecordCreated':
          return { ...(data.values as JsonObject), ...key, [TENANT_COLUMN]: data.tenant ?? null };
        case 'RecordUpdated':
          return row ? { ...row, ...(data.changes as JsonObject) } : null;
        default:
          return null;
      }
    },
  });
}

export interface RecordContext {
  tenant: string | null;
  at: string;
  metadata?: EventMetadata;
}

/** Where record writes go: straight to the store, or into a caller's transaction (ModelOp steps). */
type Writer = EventStore | EventTransaction;

export class RecordCommands {
  constructor(private readonly store: EventStore) {}

  /** Appends RecordCreated; the service fills the uuid key and created_at/updated_at when declared. */
  async create(model: ModelDefinition, input: JsonObject, context: RecordContext, writer: Writer = this.store): Promise<string> {
    const id = newId();
    const values: JsonObject = { ...input, [model.primaryKey.name]: id };
    for (const stamp of ['created_at', 'updated_at']) {
      if (model.fields.some((f) => f.name === stamp && f.type === 'timestamp') && values[stamp] === undefined) values[stamp] = context.at;
    }
    await this.write(
      writer,
      {
        streamId: recordStream(model, id),
        expectedVersion: 0,
        events: [{ type: 'RecordCreated', data: { model: model.slug, table: model.tablename, id, values, tenant: context.tenant, at: context.at } }],
      },
      context,
    );
    return id;
  }

  async update(model: ModelDefinition, id: string, changes: JsonObject, context: RecordContext, writer: Writer = this.store): Promise<void> {
    const stamped: JsonObject = { ...changes };
    if (model.fields.some((f) => f.name === 'updated_at' && f.type === 'timestamp')) stamped.updated_at = context.at;
    await this.appendToLive(model, id, context, writer, {
      type: 'RecordUpdated',
      data: { model: model.slug, table: model.tablename, id, changes: stamped, at: context.at },
    });
  }

  async delete(model: ModelDefinition, id: string, context: RecordContext, writer: Writer = this.store): Promise<void> {
    await this.appendToLive(model, id, context, writer, { type: 'RecordDeleted', data: { model: model.slug, table: model.tablename, id, at: context.at } });
  }

  /**
   * Appends one event to a live record's stream. Straight to the store, a lost race is retried on
   * fresh state: an update names only the fields it changes, so it applies on top of the winner's
   * (a record deleted meanwhile is a 404). Inside a caller's transaction the caller owns retries.
   */
  private async appendToLive(model: ModelDefinition, id: string, context: RecordContext, writer: Writer, event: NewEvent): Promise<void> {
    const streamId = recordStream(model, id);
    if ('client' in writer) {
      const events = await this.store.readWholeStream(streamId, writer.client);
      await this.write(writer, { streamId, expectedVersion: liveVersion(model, id, context.tenant, events), events: [event] }, context);
      return;
    }
    await runCommand(writer, {
      streams: [streamId],
      decide: (read) => {
        liveVersion(model, id, context.tenant, read.get(streamId)!);
        return { events: { [streamId]: [event] }, result: undefined };
      },
      ...(context.metadata ? { metadata: context.metadata } : {}),
    });
  }

  private async write(writer: Writer, request: AppendToStream, context: RecordContext): Promise<void> {
    await writer.append(request, context.metadata ? { metadata: context.metadata } : {});
  }
}

/** The stream version of a record that exists, is not deleted and belongs to the tenant; else 404. */
function liveVersion(model: ModelDefinition, id: string, tenant: string | null, events: RecordedEvent[]): number {
  const created = events[0];
  const deleted = events.some((e) => e.type === 'RecordDeleted');
  if (!created || deleted || ((created.data as JsonObject).tenant ?? null) !== (tenant as JsonValue)) {
    throw new NotFoundError(`${model.name} ${id} not found`);
  }
  return events.at(-1)!.streamPosition;
}
