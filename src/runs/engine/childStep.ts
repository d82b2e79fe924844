// The Workflow step: starts a child run (exactly once: its run_started commits with the parent's
// child_started) and, with `wait: true`, leaves the parent in waiting_child until the child's end is
// journaled on the parent's stream (child_finished, see parentNotice.ts); then the step completes.
import type { DataKeys } from '../../privacy/dataKeys.js';
import { runSealerOf, sealRunEvent } from '../personal.js';
import { newId } from '../../kernel/ids.js';
import { isJsonObject, type JsonObject } from '../../kernel/json.js';
import { isAllowed } from '../../kernel/access.js';
import type { Logger } from '../../kernel/logger.js';
import { compileValidator, type Validator } from '../../kernel/validation.js';
import type { ModelRegistry } from '../../models/registry.js';
import { inputSchemaOf } from '../../workflows/schemas.js';
import type { StepDefinition, WorkflowDefinition } from '../../workflows/definition.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { mapPaths } from '../../workflows/template.js';
import { runEvent, runStream, type ChildFinished, type ChildStarted, type RunEvent, type RunPrincipal } from '../events.js';
import { isOpenToAll, workflowGate } from '../trigger/gate.js';
import type { Drive } from './drive.js';
import type { DriveWriter } from './driveWriter.js';
import { stepEvents } from './outcome.js';
import { errorOutcome, NO_CHANGES, type StepOutcome } from './steps/types.js';
import { withTraceContext } from './runTracing.js';

/** Runs started by runs, nested deeper than this, fail the step that would start the next one. */
export const MAX_CHILD_DEPTH = 10;

export interface ChildRunDeps {
  workflows: WorkflowRegistry;
  /** Resolves a child's `input_schema` that names a model. */
  models: ModelRegistry;
  /** Drives the child here (it is in the journal already; any worker's claims would pick it up otherwise). */
  resume: (runId: string) => Promise<void>;
  logger: Logger;
  /** Seals the child's input keys its workflow lists in spec.personal_data. */
  dataKeys?: DataKeys | undefined;
}

/** The child the step's current visit started (after the step last finished), if any. */
export function childOfVisit(drive: Drive, stepId: string): ChildStarted | null {
  let started: ChildStarted | null = null;
  for (const event of [...drive.recorded, ...drive.pending]) {
    if (event.data.agent_id !== stepId) continue;
    if (event.type === 'child_started') started = event.data.payload;
    else if (event.type === 'step_completed' || event.type === 'step_failed') started = null;
  }
  return started;
}

const isWaiting = (step: StepDefinition) => step.config.wait !== false;

export async function runWorkflowStep(drive: Drive, step: StepDefinition, writer: DriveWriter, deps: ChildRunDeps): Promise<void> {
  const started = childOfVisit(drive, step.id);
  if (started === null) return startChild(drive, step, writer, deps);
  // Fire and forget (as journaled): the child is in the journal; a crash before the step completed comes back here.
  if (!started.wait) return completeStep(drive, step, writer, { signal: 'default', changes: NO_CHANGES });
  const finished = drive.state.childFinished;
  // The run loop stops on waiting_child before it comes here: a waited-for child without its end is a journal this engine never writes.
  if (finished === null || finished.run_id !== started.run_id) throw new Error(`run ${drive.runId} step ${step.id}: child ${started.run_id} has not ended`);
  await completeStep(drive, step, writer, childOutcome(step, finished));
}

async function startChild(drive: Drive, step: StepDefinition, writer: DriveWriter, deps: ChildRunDeps): Promise<void> {
  writer.push(drive, runEvent('step_started', {}, step));
  const planned = planChild(drive, step, deps);
  if ('failed' in planned) return completeStep(drive, step, writer, planned.failed);
  const { workflow } = planned;
  const runId = newId();
  const { principal, depth } = drive.state;
  // The child's trace context is this step's span: its runs' spans hang under the step that started it.
  const childStarted = withTraceContext(
    runEvent('run_started', {
      run_id: runId,
      workflow: workflow.name,
      schema_version: workflow.version,
      input: planned.input,
      principal,
      trigger: 'workflow',
      first_step: workflow.steps[0]?.id ?? null,
      parent_run_id: drive.runId,
      depth: depth + 1,
    }),
  );
  // The child's own personal data is sealed with the child's key (its principal is the parent's).
  const childSealer = (workflow.personalData ?? []).length > 0 ? await runSealerOf(deps.dataKeys, workflow, runId, principal) : undefined;
  const childStored = childSealer ? sealRunEvent(childSealer, childStarted) : childStarted;
  writer.push(drive, runEvent('child_started', { run_id: runId, workflow: workflow.name, schema_version: workflow.version, wait: isWaiting(step) }, step));
  // One transaction: the child exists exactly when the parent's journal says it started, so a
  // replay after a crash finds its child_started and never starts a second child.
  await writer.flush(drive, async (tx) => {
    await tx.append({ streamId: runStream(runId), expectedVersion: 0, events: [childStored] });
    return [];
  });
  if (drive.fenced) return;
  void deps.resume(runId).catch((error: unknown) => deps.logger.warn({ err: error, runId }, 'starting a child run failed; claims pick it up'));
  if (!isWaiting(step)) await completeStep(drive, step, writer, { signal: 'default', changes: NO_CHANGES });
}

/** The child's definition and input, or the step's error: an unknown workflow, nesting too deep, input its schema refuses. */
function planChild(
  drive: Drive,
  step: StepDefinition,
  { workflows, models }: ChildRunDeps,
): { workflow: WorkflowDefinition; input: JsonObject } | { failed: StepOutcome } {
  const name = String(step.config.workflow ?? '');
  const version = step.config.version === undefined ? undefined : String(step.config.version);
  const workflow = version === undefined ? workflows.active(name) : workflows.find(name, version);
  const fail = (message: string, name: string) => ({ failed: errorOutcome(message, { step: step.id, name }) });
  if (!workflow || !workflows.isEnabled(workflow))
    return fail(`workflow ${name}${version ? ` version ${version}` : ''} is not loaded (or not enabled)`, 'UnknownWorkflow');
  // The child runs as the parent's principal: it passes the child's own gates, as a trigger would.
  if (!mayRun(workflow, drive.state.principal)) {
    const needs = [workflow.requiredScope, workflow.requiredGroup].filter(Boolean).join(' and ') || 'a signed-in caller';
    return fail(`the run's principal may not run ${name}: it requires ${needs}`, 'ChildPermissionDenied');
  }
  if (drive.state.depth + 1 > MAX_CHILD_DEPTH) {
    return fail(
      `child workflows nest at most ${MAX_CHILD_DEPTH} levels deep: ${drive.workflow.name} (depth ${drive.state.depth}) cannot start ${name}`,
      'ChildDepthExceeded',
    );
  }
  const input = isJsonObject(step.config.input) ? mapPaths(step.config.input, drive.state.context) : {};
  // The child's input passes its input_schema, as a trigger's does: a run never starts on input its workflow refuses.
  const issues = inputValidatorOf(workflow, models).issues(input);
  if (issues.length > 0) {
    const found = issues.map((issue) => `${issue.loc.slice(1).join('.') || 'input'}: ${issue.msg}`).join('; ');
    return fail(`the input for ${name} does not match its input_schema: ${found}`, 'ChildInputInvalid');
  }
  return { workflow, input };
}

function mayRun(workflow: WorkflowDefinition, principal: RunPrincipal | null): boolean {
  if (principal === null) return isOpenToAll(workflow);
  const caller = { userId: principal.user_id, groups: principal.groups, scopes: principal.scopes, isDev: false };
  return isAllowed(caller, workflowGate(workflow));
}

const validators = new WeakMap<WorkflowDefinition, Validator<JsonObject>>();

function inputValidatorOf(workflow: WorkflowDefinition, models: ModelRegistry): Validator<JsonObject> {
  let validator = validators.get(workflow);
  if (!validator) validators.set(workflow, (validator = compileValidator<JsonObject>(inputSchemaOf(workflow, models))));
  return validator;
}

/** The child's output at `output_key`, or the step's error (its `error` route) when the child failed or was aborted. */
function childOutcome(step: StepDefinition, finished: ChildFinished): StepOutcome {
  if (finished.status !== 'completed') {
    const cause = finished.error?.message ?? `the child run was ${finished.status}`;
    return errorOutcome(`child run ${finished.run_id} ${finished.status}: ${cause}`, {
      step: step.id,
      name: 'ChildRunFailed',
      run_id: finished.run_id,
      status: finished.status,
    });
  }
  const key = typeof step.config.output_key === 'string' ? step.config.output_key : null;
  return { signal: 'default', changes: { set: key ? { [key]: finished.output } : {}, unset: [] } };
}

async function completeStep(drive: Drive, step: StepDefinition, writer: DriveWriter, outcome: StepOutcome): Promise<void> {
  const events: RunEvent[] = stepEvents(drive.workflow, step, outcome, 0);
  for (const event of events) writer.push(drive, event);
  await writer.flush(drive);
}
