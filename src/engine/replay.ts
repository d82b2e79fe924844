// Replay: re-executes a run's steps against its journal, with recorded outside answers, and reports
// per step whether the definition and code today would do the SAME thing or something DIFFerent.
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from '../kernel/json.js';
import type { StepDefinition, WorkflowDefinition } from '../workflows/definition.js';
import type { RunPrincipal } from './state.js';
import { STEP_EXECUTORS } from './steps/index.js';
import type { StepDeps } from './steps/types.js';
import { applyChanges, publicChanges, render, type ContextChanges } from './template.js';

export interface JournalEntry {
  type: string;
  agent_id: string;
  engine: string;
  payload: JsonObject;
}

export interface ReplayLine {
  step: string;
  kind: string;
  verdict: 'SAME' | 'DIFF';
  detail?: string;
}

export async function replayRun(workflow: WorkflowDefinition, journal: JournalEntry[], deps: StepDeps): Promise<ReplayLine[]> {
  const started = journal.find((e) => e.type === 'run_started');
  if (!started) throw new Error('the journal has no run_started event');
  let context = (started.payload.input ?? {}) as JsonObject;
  const principal = (started.payload.principal as RunPrincipal | null) ?? null;
  const runId = String(started.payload.run_id ?? 'replay');
  const lines: ReplayLine[] = [];
  for (const entry of journal.filter((e) => e.type === 'step_completed' || e.type === 'step_failed')) {
    const recorded = entry.payload;
    const recordedChanges = recorded.changes as unknown as ContextChanges;
    const step = workflow.steps.find((s) => s.id === entry.agent_id);
    if (!step || step.kind !== entry.engine) {
      lines.push({ step: entry.agent_id, kind: entry.engine, verdict: 'DIFF', detail: 'the step is no longer in the workflow (or changed kind)' });
    } else {
      lines.push(await replayStep(workflow, step, context, principal, runId, recorded, deps));
    }
    // Later steps see what the run saw, so one difference does not cascade.
    context = applyChanges(context, recordedChanges);
  }
  return lines;
}

async function replayStep(
  workflow: WorkflowDefinition,
  step: StepDefinition,
  context: JsonObject,
  principal: RunPrincipal | null,
  runId: string,
  recorded: JsonObject,
  deps: StepDeps,
): Promise<ReplayLine> {
  const line = (differences: string[]): ReplayLine =>
    differences.length === 0 ? { step: step.id, kind: step.kind, verdict: 'SAME' } : { step: step.id, kind: step.kind, verdict: 'DIFF', detail: differences.join('; ') };
  if (step.kind === 'ModelOp') {
    // Writes are not repeated: compare what the step would write now with what it wrote then.
    const operation = String(step.config.operation);
    if (operation !== recorded.operation) return line([`operation ${String(recorded.operation)} -> ${operation}`]);
    const payload = ['create', 'update'].includes(operation) ? render(step.config.payload ?? {}, context) : undefined;
    return line(payload !== undefined && recorded.payload !== undefined && !isDeepStrictEqual(payload, recorded.payload) ? ['payload differs'] : []);
  }
  const answers = new Map<string, JsonObject>();
  if (step.kind === 'APICall' || step.kind === 'MCP') answers.set(step.id, recorded);
  const outcome = await STEP_EXECUTORS[step.kind](
    { runId, workflow, step, context, principal, at: new Date().toISOString() },
    { ...deps, recorded: answers },
  );
  const differences: string[] = [];
  if (outcome.signal !== recorded.signal) differences.push(`signal ${String(recorded.signal)} -> ${outcome.signal}`);
  if (!isDeepStrictEqual(publicChanges(outcome.changes), publicChanges(recorded.changes as unknown as ContextChanges))) differences.push('context changes differ');
  if (step.kind === 'APICall') {
    const request = outcome.journal?.request as JsonObject | undefined;
    const before = recorded.request as JsonObject | undefined;
    if (request && before && (request.url !== before.url || request.method !== before.method || !isDeepStrictEqual(request.body ?? null, before.body ?? null))) {
      differences.push('the request differs');
    }
  }
  return line(differences);
}
