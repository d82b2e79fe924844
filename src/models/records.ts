// Model records as events on `record-<model>-<id>` streams; the model's table is their inline projection.
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventTransaction } from '../eventstore/transaction.js';
import type { AppendToStream, EventMetadata, NewEvent, RecordedEvent } from '../eventstore/types.js';
import { NotFoundError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { JsonObject, JsonValue } from '../kernel/json.js';
import { defineProjection, type Row, type RowProjection } from '../projections/types.js';
import { recordSubject, type DataKeys } from '../privacy/dataKeys.js';
import { personalFieldsOf, type ModelDefinition } from './definition.js';
import { TENANT_COLUMN } from './tables.js';

export const recordStream = (model: ModelDefinition, id: string) => `record-${model.slug}-${id}`;
const RECORD_EVENTS = ['RecordCreated', 'RecordUpdated', 'RecordDeleted'];

/**
 * One projection per model table; events name their table, so each projection takes only its own.
 * `personalFields` (of every version on the table) hold sealed values; `subject_erased` nulls them.
 */
export function recordProjection(table: string, primaryKey: string, personalFields: readonly string[] = []): RowProjection {
  return defineProjection({
    name: `records:${table}`,
    version: 1,
    table,
    key: [primaryKey],
    eventTypes: personalFields.length > 0 ? [...RECORD_EVENTS, 'subject_erased'] : RECORD_EVENTS,
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
        case 'subject_erased':
          return row ? { ...row, ...Object.fromEntries(personalFields.filter((name) => name in row).map((name) => [name, null])) } : null;
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
  constructor(
    private readonly store: EventStore,
    private readonly keys: DataKeys,
  ) {}

  /** Records as the API answers them: `personal: true` fields opened (null once erased), related records' too. */
  async open<T extends JsonObject>(model: ModelDefinition, rows: T[]): Promise<T[]> {
    const fields = personalFieldsOf(model);
    return fields.length === 0 && !rows.some(hasNested) ? rows : this.keys.openFields(rows, fields);
  }

  /**
   * Erases a record's personal fields: `subject_erased` on its stream, then its data key destroyed.
   * `models`: every version that may hold it. A record of no model with personal fields is a 404.
   */
  async erase(models: readonly ModelDefinition[], id: string, at: string, metadata?: EventMetadata): Promise<void> {
    for (const model of models.filter((m) => personalFieldsOf(m).length > 0)) {
      const streamId = recordStream(model, id);
      const events = await this.store.readWholeStream(streamId);
      if (events.length === 0) continue;
      if (!events.some((e) => e.type === 'subject_erased')) {
        const event = { type: 'subject_erased', data: { subject_type: 'record', id, model: model.slug, table: model.tablename, at } };
        await this.store.append({ streamId, expectedVersion: 'any', events: [event] }, metadata ? { metadata } : {});
      }
      await this.keys.erase(recordSubject(id));
      return;
    }
    throw new NotFoundError(`No record ${id} with personal fields`);
  }

  /** Seals the `personal: true` fields of values written to a record (nothing to do for most models). */
  private async seal(model: ModelDefinition, id: string, values: JsonObject): Promise<JsonObject> {
    const fields = personalFieldsOf(model).filter((name) => typeof values[name] === 'string');
    if (fields.length === 0) return values;
    const sealed: JsonObject = { ...values };
    for (const name of fields) sealed[name] = await this.keys.seal(recordSubject(id), values[name] as string);
    return sealed;
  }

  /** Appends RecordCreated; the service fills the uuid key and created_at/updated_at when declared. */
  async create(model: ModelDefinition, input: JsonObject, context: RecordContext, writer: Writer = this.store): Promise<string> {
    const id = newId();
    const values: JsonObject = await this.seal(model, id, { ...input, [model.primaryKey.name]: id });
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
    const stamped: JsonObject = await this.seal(model, id, { ...changes });
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

/** Whether rows embed related records (an include), which may hold sealed fields of their own. */
function hasNested(row: JsonObject): boolean {
  return Object.values(row).some((value) => value !== null && typeof value === 'object' && !(value instanceof Date));
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
