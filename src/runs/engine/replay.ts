// Replay: re-executes a run's steps against its journal, with recorded outside answers and decisions,
// and reports per step whether the definition and code today would do the SAME thing or something
// DIFFerent (Agent steps are KEPT: their LLM turns cannot be asked again and come out the same; so are
// the steps a fork copied from its source run: the fork never ran them, the source's replay covers them).
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from '../../kernel/json.js';
import type { StepDefinition, WorkflowDefinition } from '../../workflows/definition.js';
import { copiedFromOf, type ApprovalDecided, type RunEvent, type RunPrincipal, type StepFinished } from '../events.js';
import { humanOutcome } from './steps/human.js';
import { STEP_EXECUTORS } from './steps/index.js';
import type { StepDeps, StepOutcome } from './steps/types.js';
import { waitFiresAt } from './steps/wait.js';
import { applyChanges, publicChanges, render } from '../../workflows/template.js';

export interface ReplayLine {
  step: string;
  kind: string;
  /** KEPT: not re-executed (Agent steps); neither SAME nor DIFF. */
  verdict: 'SAME' | 'DIFF' | 'KEPT';
  detail?: string;
}

export const AGENT_KEPT = 'recorded agent turns are not replayed';
export const COPY_KEPT = 'copied by a fork from run';

export async function replayRun(workflow: WorkflowDefinition, journal: readonly RunEvent[], deps: StepDeps): Promise<ReplayLine[]> {
  const started = journal.find((e) => e.type === 'run_started');
  if (!started) throw new Error('the journal has no run_started event');
  const { input, principal = null, run_id: runId = 'replay' } = started.data.payload;
  let context = input ?? {};
  const lines: ReplayLine[] = [];
  // The latest decision, until the step that asked for it completes (as the run state keeps it).
  let decided: ApprovalDecided | null = null;
  for (const event of journal) {
    if (event.type === 'approval_decided') decided = event.data.payload;
    if (event.type !== 'step_completed' && event.type !== 'step_failed') continue;
    const { agent_id: stepId, engine: kind, payload: recorded } = event.data;
    const step = workflow.steps.find((s) => s.id === stepId);
    const copiedFrom = copiedFromOf(event);
    if (copiedFrom) {
      lines.push({ step: stepId, kind, verdict: 'KEPT', detail: `${COPY_KEPT} ${copiedFrom.run_id}` });
    } else if (!step || step.kind !== kind) {
      lines.push({ step: stepId, kind, verdict: 'DIFF', detail: 'the step is no longer in the workflow (or changed kind)' });
    } else {
      lines.push(await replayStep(workflow, step, context, principal, runId, recorded, decided, deps));
    }
    decided = null;
    // Later steps see what the run saw, so one difference does not cascade.
    context = applyChanges(context, recorded.changes);
  }
  return lines;
}

async function replayStep(
  workflow: WorkflowDefinition,
  step: StepDefinition,
  context: JsonObject,
  principal: RunPrincipal | null,
  runId: string,
  recorded: StepFinished,
  decided: ApprovalDecided | null,
  deps: StepDeps,
): Promise<ReplayLine> {
  const line = (differences: string[]): ReplayLine =>
    differences.length === 0
      ? { step: step.id, kind: step.kind, verdict: 'SAME' }
      : { step: step.id, kind: step.kind, verdict: 'DIFF', detail: differences.join('; ') };
  if (step.kind === 'Agent') return { step: step.id, kind: step.kind, verdict: 'KEPT', detail: AGENT_KEPT };
  if (step.kind === 'Workflow')
    return { step: step.id, kind: step.kind, verdict: 'KEPT', detail: 'a child run is not started again: its recorded outcome is kept' };
  if (step.kind === 'Wait') {
    // The time is not waited out again: only whether the step would fire or fail on its date.
    const signal = 'failed' in waitFiresAt(step, context, new Date()) ? 'error' : 'default';
    return line(signal === recorded.signal ? [] : [`signal ${String(recorded.signal)} -> ${signal}`]);
  }
  if (step.kind === 'ModelOp') {
    // Writes are not repeated: compare what the step would write now with what it wrote then.
    const operation = String(step.config.operation);
    if (operation !== recorded.operation) return line([`operation ${String(recorded.operation)} -> ${operation}`]);
    const payload = ['create', 'update'].includes(operation) ? render(step.config.payload ?? {}, context) : undefined;
    return line(payload !== undefined && recorded.payload !== undefined && !isDeepStrictEqual(payload, recorded.payload) ? ['payload differs'] : []);
  }
  let outcome: StepOutcome;
  if (step.kind === 'HumanInTheLoop') {
    // The person is not asked again: the recorded decision goes through today's step definition.
    if (decided?.step_id !== step.id) return line(['no recorded decision for the step']);
    outcome = humanOutcome(step, decided);
  } else {
    const answers = new Map<string, StepFinished>();
    if (step.kind === 'APICall' || step.kind === 'MCP') answers.set(step.id, recorded);
    outcome = await STEP_EXECUTORS[step.kind]({ runId, workflow, step, context, principal, at: new Date().toISOString() }, { ...deps, recorded: answers });
  }
  return line(differencesOf(step, outcome, recorded));
}

function differencesOf(step: StepDefinition, outcome: StepOutcome, recorded: StepFinished): string[] {
  const differences: string[] = [];
  if (outcome.signal !== recorded.signal) differences.push(`signal ${String(recorded.signal)} -> ${outcome.signal}`);
  if (!isDeepStrictEqual(publicChanges(outcome.changes), publicChanges(recorded.changes))) differences.push('context changes differ');
  if (step.kind === 'APICall') {
    const request = outcome.report?.request;
    const before = recorded.request;
    if (
      request &&
      before &&
      (request.url !== before.url || request.method !== before.method || !isDeepStrictEqual(request.body ?? null, before.body ?? null))
    ) {
      differences.push('the request differs');
    }
  }
  return differences;
}
