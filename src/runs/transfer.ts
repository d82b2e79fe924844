// Run export and import: the journal moves between instances and reads back identically.
import type { EventStore } from '../eventstore/store.js';
import type { Pool } from '../db/pool.js';
import { BadRequestError, NotFoundError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { RUN_EVENT_TYPES, runStream } from './events.js';
import { presentRunEvent, runDescriptor } from './present.js';
import { findRun } from './queries.js';

export const RUN_EXPORT_FORMAT = 'svc.run/v1';

export interface RunExport extends JsonObject {
  format: string;
  run: JsonObject;
  workflow: { name: string; schema_version: string; definition: JsonObject | null };
  events: JsonObject[];
}

export async function exportRun(pool: Pool, store: EventStore, workflows: WorkflowRegistry, runId: string): Promise<RunExport> {
  const run = await findRun(pool, runId);
  if (!run) throw new NotFoundError(`Run ${runId} not found`);
  const events = await store.readWholeStream(runStream(run.id));
  return {
    format: RUN_EXPORT_FORMAT,
    run: runDescriptor(run),
    workflow: {
      name: run.workflow,
      schema_version: run.schema_version,
      definition: (workflows.find(run.workflow, run.schema_version)?.source as JsonObject | undefined) ?? null,
    },
    events: events.map(presentRunEvent),
  };
}

const exportShape = compileValidator<RunExport>({
  type: 'object',
  required: ['format', 'run', 'workflow', 'events'],
  properties: {
    format: { const: RUN_EXPORT_FORMAT },
    run: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
    workflow: { type: 'object' },
    events: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['seq', 'ts', 'type', 'agent_id', 'engine', 'payload'],
        properties: {
          seq: { type: 'integer', minimum: 1 },
          ts: { type: 'string', format: 'date-time' },
          type: { enum: [...RUN_EVENT_TYPES] },
          agent_id: { type: 'string' },
          engine: { type: 'string' },
          payload: { type: 'object' },
        },
      },
    },
  },
});

/** Appends the exported journal to a new run stream with its original times; a run already there is a 409. */
export async function importRun(store: EventStore, document: unknown, actor = 'import'): Promise<string> {
  const exported = exportShape.parse(document);
  const runId = String(exported.run.id);
  if (!isUuid(runId)) throw new BadRequestError('run.id must be a uuid');
  const events = [...exported.events].sort((a, b) => Number(a.seq) - Number(b.seq));
  events.forEach((event, index) => {
    if (Number(event.seq) !== index + 1) throw new BadRequestError(`events must be numbered 1..n without gaps (seq ${String(event.seq)} at ${index + 1})`);
  });
  await store.append(
    {
      streamId: runStream(runId),
      expectedVersion: 0,
      events: events.map((event) => ({
        type: String(event.type),
        data: { agent_id: String(event.agent_id), engine: String(event.engine), payload: event.payload as JsonObject },
        recordedAt: String(event.ts),
        metadata: { actor, imported: true },
      })),
    },
  );
  return runId;
}
