// Forking a run from a step (POST /api/runs/{id}/fork): a new run of the same workflow version whose
// journal starts with the source's events before the step, copied (same type and data, metadata
// `copied_from`), so the engine resumes it at that step exactly as it resumes any run from its
// journal: nothing before the step runs again.
import type { DataKeys } from '../privacy/dataKeys.js';
import { openRunEvents, runSealerOf, sealRunEvent } from './personal.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { Principal } from '../kernel/access.js';
import { ConflictError, NotFoundError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { JsonObject } from '../kernel/json.js';
import type { WorkflowDefinition } from '../workflows/definition.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import type { RunExecutor } from './engine/executor.js';
import { asRunEvent, runEvent, runStream, type RecordedRunEvent, type RunEvent, type RunPrincipal, type RunStarted } from './events.js';
import { passGate } from './trigger/gate.js';

/** Run-level control of the source (its pauses) is the source's own: a fork starts unpaused. */
const NOT_COPIED: ReadonlySet<string> = new Set(['run_started', 'pause_requested', 'paused', 'resumed']);

/**
 * Index in the journal of the first event of the step's latest visit: its step_started after the
 * step last finished (a retried visit has several step_started; the first one opens the visit).
 * Undefined when the run never started the step.
 */
export function latestVisitStart(journal: readonly RunEvent[], stepId: string): number | undefined {
  let start: number | undefined;
  let isOpen = false;
  journal.forEach((event, index) => {
    if (event.data.agent_id !== stepId) return;
    if (event.type === 'step_started' && !isOpen) {
      start = index;
      isOpen = true;
    } else if (event.type === 'step_completed' || event.type === 'step_failed') {
      isOpen = false;
    }
  });
  return start;
}

export interface ForkDecision {
  sourceRunId: string;
  /** The source's journal, as read. */
  journal: readonly RecordedRunEvent[];
  workflow: WorkflowDefinition;
  fromStep: string;
  /** The fork's input: the source's with the request's merged over it (checked against the input schema). */
  input: JsonObject;
  principal: RunPrincipal | null;
  runId: string;
}

/**
 * Pure: the fork's journal: its run_started (trigger `fork`, `forked_from`), then the source's events
 * before the latest visit of `fromStep`, each marked with where it was copied from. A step the
 * workflow does not have is NOT_FOUND; one the source never reached is a CONFLICT.
 */
export function decideFork({ sourceRunId, journal, workflow, fromStep, input, principal, runId }: ForkDecision): RunEvent[] {
  if (!workflow.steps.some((step) => step.id === fromStep)) {
    throw new NotFoundError(`Workflow ${workflow.name} ${workflow.version} has no step ${fromStep}`, { step_id: fromStep });
  }
  const cut = latestVisitStart(journal, fromStep);
  if (cut === undefined) throw new ConflictError(`Run ${sourceRunId} never reached step ${fromStep}: there is nothing to fork from`, { step_id: fromStep });
  const started = journal[0];
  if (started?.type !== 'run_started') throw new Error(`run ${sourceRunId} has no run_started`);
  const payload: RunStarted = {
    run_id: runId,
    workflow: workflow.name,
    schema_version: workflow.version,
    input,
    principal,
    trigger: 'fork',
    first_step: started.data.payload.first_step ?? null,
    forked_from: { run_id: sourceRunId, step_id: fromStep },
  };
  const copies = journal
    .slice(0, cut)
    .filter((event) => !NOT_COPIED.has(event.type))
    .map((event) => ({
      type: event.type,
      data: event.data,
      metadata: { copied_from: { run_id: sourceRunId, global_position: event.globalPosition } },
    }));
  return [runEvent('run_started', payload), ...copies.map((copy) => asRunEvent(copy))];
}

export interface ForkDeps {
  store: EventStore;
  workflows: WorkflowRegistry;
  executor: RunExecutor;
  /** The workflow's input schema check (the trigger's), for the merged input. */
  checkInput: (workflow: WorkflowDefinition, input: JsonObject) => JsonObject;
  /** Opens the source's spec.personal_data and seals the fork's with a key of its own (the fork is the caller's run). */
  dataKeys?: DataKeys | undefined;
}

export interface ForkRequest {
  sourceRunId: string;
  fromStep: string;
  input: JsonObject;
  /** Who forks: the new run is theirs, and they must pass the workflow's gate as a trigger's caller would. */
  caller: Principal;
  metadata: EventMetadata;
}

/** Journals the fork (one append opens its stream), then drives it here; any worker's claims pick it up otherwise. */
export async function forkRun(deps: ForkDeps, request: ForkRequest): Promise<string> {
  const { store, workflows, executor } = deps;
  let journal = (await store.readWholeStream(runStream(request.sourceRunId))).map((event) => asRunEvent(event));
  const started = journal[0];
  if (started?.type !== 'run_started') throw new NotFoundError(`Run ${request.sourceRunId} not found`);
  const { workflow: name, schema_version: version } = started.data.payload;
  const workflow = workflows.find(name, version);
  if (!workflow) throw new ConflictError(`Workflow ${name} ${version} is not loaded here: a fork of its run cannot run`);
  if (!workflows.isEnabled(workflow)) throw new ConflictError(`Workflow ${name} ${version} is disabled: enable it to fork its runs`);
  const principal = passGate(workflow, request.caller);
  const runId = newId();
  const sealer = (workflow.personalData ?? []).length > 0 ? await runSealerOf(deps.dataKeys, workflow, runId, principal) : undefined;
  if (sealer) journal = await openRunEvents(deps.dataKeys!, journal);
  const opened = journal[0]!;
  const sourceInput = opened.type === 'run_started' ? opened.data.payload.input : started.data.payload.input;
  const input = deps.checkInput(workflow, { ...sourceInput, ...request.input });
  const decided = decideFork({ sourceRunId: request.sourceRunId, journal, workflow, fromStep: request.fromStep, input, principal, runId });
  const events = sealer ? decided.map((event) => sealRunEvent(sealer, event)) : decided;
  await store.append({ streamId: runStream(runId), expectedVersion: 0, events }, { metadata: request.metadata });
  await executor.resume(runId);
  return runId;
}
