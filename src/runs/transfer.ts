// Run export and import: the journal moves between instances and reads back identically.
import type { DataKeys } from '../privacy/dataKeys.js';
import { openPersonalObject, openRunEvents, sealRunEvent, type RunSealer } from './personal.js';
import type { JSONWebKeySet } from 'jose';
import { ZERO_HASH } from '../eventstore/canonical.js';
import type { EventStore } from '../eventstore/store.js';
import type { SigningKeys } from '../iam/keys.js';
import type { Pool } from '../db/pool.js';
import { evolveRun, initialRunState, isTerminal, type RunState, type RunStatus } from './state.js';
import { BadRequestError, ConflictError, NotFoundError, VersionConflictError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { isJsonObject, type JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { asRunEvent, copiedFromOf, RUN_EVENT_TYPES, runStream, type RunEvent } from './events.js';
import { runDescriptor } from './present.js';
import { exportedEvent, signExport, verifyExport } from './signedExport.js';
import { findRun } from './queries.js';

export const RUN_EXPORT_FORMAT = 'svc.run/v1';

/**
 * An event of an export (as presentRunEvent shows it) as the run event it was, with the copy mark of
 * an event a fork copied (replay does not count those as the fork's own steps).
 */
export function exportedRunEvent(event: JsonObject): RunEvent {
  const copiedFrom = copiedFromOf({ metadata: isJsonObject(event.metadata) ? event.metadata : {} });
  return asRunEvent({
    type: String(event.type),
    data: { agent_id: String(event.agent_id), engine: String(event.engine), payload: event.payload ?? null },
    ...(copiedFrom ? { metadata: { copied_from: copiedFrom } } : {}),
  });
}

export interface RunExport extends JsonObject {
  format: string;
  run: JsonObject;
  workflow: { name: string; schema_version: string; definition: JsonObject | null };
  events: JsonObject[];
  /** Detached JWS over the rest of the document (absent from exports made before issue 19). */
  signature: string;
}

/** The run's journal with each event's hash, signed with the service key (see signedExport.ts). */
export async function exportRun(
  pool: Pool,
  store: EventStore,
  workflows: WorkflowRegistry,
  runId: string,
  keys: SigningKeys,
  dataKeys?: DataKeys,
): Promise<RunExport> {
  const found = await findRun(pool, runId);
  if (!found) throw new NotFoundError(`Run ${runId} not found`);
  // Sealed spec.personal_data is shown opened (null once erased): such events are marked `redacted`.
  const run = dataKeys ? { ...found, input: await openPersonalObject(dataKeys, found.input), output: await openPersonalObject(dataKeys, found.output) } : found;
  const stored = await store.readWholeStream(runStream(run.id));
  const shown = dataKeys ? await openRunEvents(dataKeys, stored) : stored;
  const content = {
    format: RUN_EXPORT_FORMAT,
    run: runDescriptor(run),
    workflow: {
      name: run.workflow,
      schema_version: run.schema_version,
      definition: (workflows.find(run.workflow, run.schema_version)?.source as JsonObject | undefined) ?? null,
    },
    events: shown.map((event, index) => exportedEvent(event, stored[index - 1]?.hash ?? ZERO_HASH)),
  };
  return { ...content, signature: await signExport(content, keys) };
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

export interface ImportOptions {
  /** Keys the export's signature may be from; without `unverified`, an export that does not verify is refused. */
  trustedKeys?: JSONWebKeySet;
  unverified?: boolean;
  /** Import a run that has not finished; any service on the database then claims and continues it. */
  resume?: boolean;
  /** The sealer of the imported run (its workflow's spec.personal_data): an export shows values opened, the journal stores them sealed. */
  sealerOf?: (state: RunState) => Promise<RunSealer | undefined>;
}

export interface ImportedRun {
  runId: string;
  /** The status its journal folds to. */
  status: RunStatus;
}

/**
 * Appends the exported journal to a new run stream with its original times; a run already there is a
 * conflict and nothing is written. A run that has not finished is refused unless `resume`: on this
 * database it would be claimed and its remaining steps run (APICalls included).
 */
export async function importRun(store: EventStore, document: unknown, options: ImportOptions = {}): Promise<ImportedRun> {
  const { resume = false } = options;
  const exported = exportShape.parse(document);
  if (!options.unverified) {
    const check = await verifyExport(exported, options.trustedKeys ?? { keys: [] });
    if (!check.ok)
      throw new BadRequestError(`The export does not verify (${check.problem}); pass --unverified to import it anyway`, { problem: check.problem });
  }
  const runId = String(exported.run.id);
  if (!isUuid(runId)) throw new BadRequestError('run.id must be a uuid');
  const events = [...exported.events].sort((a, b) => Number(a.seq) - Number(b.seq));
  events.forEach((event, index) => {
    if (Number(event.seq) !== index + 1) throw new BadRequestError(`events must be numbered 1..n without gaps (seq ${String(event.seq)} at ${index + 1})`);
  });
  const journal = events.map((event) => ({ ...exportedRunEvent(event), recordedAt: String(event.ts) }));
  // The journal, not the descriptor beside it, says whether the run is over.
  const state = journal.reduce((folded, event, index) => evolveRun(folded, event, event.recordedAt, index + 1), initialRunState);
  if (!state.exists) throw new BadRequestError('the journal does not start the run (no run_started event)');
  if (!isTerminal(state.status) && !resume) {
    throw new BadRequestError(
      `Run ${runId} is ${state.status}, not finished: imported, it would be continued by any service on this database (its remaining steps run, APICalls included). Pass --resume to import it anyway`,
      { run_id: runId, status: state.status },
    );
  }
  // Its cause (actor, source) is the importer's, in effect around the call (the CLI's).
  try {
    // A forked run's copies stay marked as copies (their source run is on the exporting instance).
    const sealer = await options.sealerOf?.(state);
    const imported = journal.map((event) => {
      const marked = { ...event, metadata: { imported: true, ...event.metadata } };
      return sealer ? sealRunEvent(sealer, marked) : marked;
    });
    await store.append({ streamId: runStream(runId), expectedVersion: 0, events: imported });
  } catch (error) {
    if (error instanceof VersionConflictError) throw new ConflictError(`Run ${runId} is already in this database`, { run_id: runId });
    throw error;
  }
  return { runId, status: state.status };
}
