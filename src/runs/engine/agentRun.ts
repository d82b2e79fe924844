// One Agent step as it runs: what the executor lends it (the host), what it set up, its state, and
// what it ends with. Shared by the loop (agent.ts) and the tool calls (agentTools.ts).
import type { AgentModelDefinition } from '../../agents/agentModel.js';
import type { Guardrail } from '../../agents/guardrails.js';
import type { LlmClient, ToolSpec } from '../../agents/llm.js';
import type { JsonObject } from '../../kernel/json.js';
import type { NewEvent } from '../../eventstore/types.js';
import { runEvent, type AgentProgress, type RunEvent, type RunEventData, type RunEventPayloads, type RunEventType, type RunPrincipal } from '../events.js';
import type { StepDefinition, WorkflowDefinition } from '../../workflows/definition.js';
import type { AgentState } from './agentState.js';
import type { StepOutcome } from './steps/types.js';

/** What the executor lends an agent step. */
export interface AgentHost {
  runId: string;
  workflow: WorkflowDefinition;
  step: StepDefinition;
  /** The run context when the step began (tool results are folded on top by the agent). */
  context: JsonObject;
  principal: RunPrincipal | null;
  /** This step's events in the journal so far (a resume finds its earlier turns here). */
  prior: RunEvent[];
  /** Aborted when the run is: the model call in flight is cancelled. */
  aborted: AbortSignal;
  /** Appends the events to the journal and commits them; false when the run must stop (aborted, fenced). */
  append(events: RunEvent[]): Promise<boolean>;
  /** Merges control events; false when the run is paused or ended. */
  checkpoint(): Promise<boolean>;
  /** Steer messages not yet given to the model. */
  takeSteers(): string[];
  /** Runs another step of the workflow as a tool, journaling `tool_result` (with a ModelOp's write). */
  runTool(step: StepDefinition, args: JsonObject, result: (outcome: StepOutcome) => RunEvent[]): Promise<StepOutcome | undefined>;
}

/** The step's outcome, or `stopped`: the run was paused, ended or waits for an approval; nothing to journal. */
export type AgentResult = { outcome: StepOutcome } | { stopped: true };

export const STOPPED: AgentResult = { stopped: true };

export interface ToolConfig {
  ref: string;
  approval?: boolean;
  required_group?: string;
  parameters?: JsonObject;
}

export interface AgentConfig {
  model?: string;
  system?: string;
  prompt?: string;
  steering?: string | string[];
  tools?: ToolConfig[];
  max_iterations?: number;
  token_budget?: number;
  guardrails?: { input?: string | string[]; output?: string | string[]; tools?: string | string[] };
  outcome?: { enum?: string[]; write?: string; format?: 'json' | 'text' };
}

export interface Guards {
  input: Guardrail[];
  output: Guardrail[];
  tools: Guardrail[];
}

export interface AgentRun {
  host: AgentHost;
  config: AgentConfig;
  /** A loop with tools, or a single completion. */
  autonomous: boolean;
  model: AgentModelDefinition;
  client: LlmClient;
  guards: Guards;
  /** The tools the model may call (none for a single completion). */
  tools: ToolConfig[];
  toolSpecs: ToolSpec[];
  maxIterations: number;
  jsonOutput: boolean;
  /** Advanced by evolveAgent with each event the step appends. */
  state: AgentState;
}

/** The step ends on `signal` (an error route by default) with `_last_error` saying why. */
export function failure(step: StepDefinition, message: string, signal = 'error'): AgentResult {
  return { outcome: { signal, changes: { set: { _last_error: { message, step: step.id } }, unset: [] } } };
}

/** An event of the Agent step. */
export function agentEvent<T extends RunEventType>(run: AgentRun, type: T, payload: RunEventPayloads[T]): NewEvent<T, RunEventData<T>> {
  return runEvent(type, payload, { id: run.host.step.id, kind: 'Agent' });
}

/** What an autonomous agent is doing, with its turn and tokens so far (for the client's step stream). */
export function progressEvent(run: AgentRun, progress: Omit<AgentProgress, 'iteration' | 'tokens_used'>): RunEvent<'agent_progress'> {
  return agentEvent(run, 'agent_progress', { ...progress, iteration: run.state.iteration, tokens_used: run.state.tokens });
}
