// What a step executor receives and answers; executors hold no state between calls.
import type { ArtifactCatalog } from '../../../artifacts/catalog.js';
import type { Pool } from '../../../db/pool.js';
import type { EventTransaction } from '../../../eventstore/transaction.js';
import type { JsonObject } from '../../../kernel/json.js';
import type { RecordCommands } from '../../../models/records.js';
import type { ModelRegistry } from '../../../models/registry.js';
import type { OutboundFetch } from '../../../outbound/fetch.js';
import type { StepDefinition, WorkflowDefinition } from '../../../workflows/definition.js';
import type { Runner } from '../nodes.js';
import type { RunEvent, RunPrincipal, StepReport } from '../../events.js';
import type { ContextChanges } from '../../../workflows/template.js';

export interface StepInput {
  runId: string;
  workflow: WorkflowDefinition;
  step: StepDefinition;
  context: JsonObject;
  principal: RunPrincipal | null;
  at: string;
  /** How many times the run already finished this step (a Router loop comes back to it); 0 the first time. */
  visit?: number;
  /** Which attempt of a step with `retry` this is (1-based; absent: the first). */
  attempt?: number;
}

export interface StepOutcome {
  signal: string;
  changes: ContextChanges;
  /** What the step records beside its routing in step_completed (an APICall's request and response, a ModelOp's operation). */
  report?: StepReport;
  /** Journaled just before step_completed (a Router's decision). */
  events?: RunEvent[];
}

/** Answers recorded by an earlier run, by step id (replay re-runs with them instead of calling out). */
export type RecordedAnswers = Map<string, StepReport>;

export interface StepDeps {
  pool: Pool;
  runners: ReadonlyMap<string, Runner>;
  models: ModelRegistry;
  records: RecordCommands;
  artifacts?: ArtifactCatalog;
  recorded?: RecordedAnswers;
  /** Where stdio MCP servers start, so their project-relative arguments resolve (default: the process's cwd). */
  projectDir?: string;
  /** Every request an APICall or MCP step sends out goes through it (the destination policy). */
  fetch: OutboundFetch;
}

export type StepExecutor = (input: StepInput, deps: StepDeps, tx?: EventTransaction) => Promise<StepOutcome>;

export const NO_CHANGES: ContextChanges = { set: {}, unset: [] };

/** The name an error goes by in `_last_error.name` (what `retry.non_retryable` lists): its `name`, else its class's. */
export function errorNameOf(error: unknown): string {
  if (!(error instanceof Error)) return 'Error';
  return error.name !== 'Error' ? error.name : error.constructor.name || 'Error';
}

export function errorOutcome(message: string, extra: JsonObject = {}): StepOutcome {
  return { signal: 'error', changes: { set: { _last_error: { message, ...extra } }, unset: [] } };
}
