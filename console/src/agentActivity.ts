// An Agent step's activity as the timeline draws it under the step's bar: each LLM turn (from the step's
// start, or the last tool answer, to the model's answer) and each tool call (from the call to its result),
// read from the journal's llm_turn, tool_call and tool_result events. The prompt itself is not journaled.
import type { Json, RunEvent } from '../../src/client/index.js';

export interface LlmTurnRow {
  kind: 'turn';
  seq: number;
  iteration: number;
  /** When the model was asked: the step's start or the previous row's end (the journal holds the answer's time only). */
  startedAt: number;
  endedAt: number;
  model: string;
  /** The step's total so far. */
  tokensUsed: number | undefined;
  /** Steer messages given to the model before this answer. */
  steers: string[];
  answer: string | null;
  /** The tools the answer asked for, in its order. */
  asksFor: string[];
}

export interface ToolCallRow {
  kind: 'tool';
  seq: number;
  callId: string;
  tool: string;
  args: Json | undefined;
  startedAt: number;
  /** Undefined while the tool runs (or waits for an approval). */
  endedAt: number | undefined;
  signal: string | undefined;
  result: Json | undefined;
}

export type AgentRow = LlmTurnRow | ToolCallRow;

export const AGENT_EVENTS = new Set(['llm_turn', 'tool_call', 'tool_result', 'agent_progress']);

const textOf = (value: Json | undefined): string | undefined => (typeof value === 'string' ? value : undefined);
const listOf = (value: Json | undefined): Json[] => (Array.isArray(value) ? value : []);
const recordOf = (value: Json | undefined): Record<string, Json | undefined> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, Json | undefined>) : {};

function turnRow(rows: readonly AgentRow[], stepStartedAt: number, event: RunEvent, at: number): LlmTurnRow {
  const p = event.payload as Record<string, Json | undefined>;
  const response = recordOf(p.response);
  const last = rows[rows.length - 1];
  return {
    kind: 'turn',
    seq: event.seq,
    iteration: typeof p.iteration === 'number' ? p.iteration : rows.filter((row) => row.kind === 'turn').length + 1,
    startedAt: Math.min(last ? (last.endedAt ?? last.startedAt) : stepStartedAt, at),
    endedAt: at,
    model: textOf(p.model) ?? '',
    tokensUsed: typeof p.tokens_used === 'number' ? p.tokens_used : undefined,
    steers: listOf(p.steers).map(String),
    answer: textOf(response.content) ?? null,
    asksFor: listOf(response.tool_calls).map((call) => String(recordOf(call).name)),
  };
}

/**
 * Adds an agent event of a step to that step's rows (`stepStartedAt`: its bar's start). A result
 * closes its call; a result without a journaled call (a call the service refused: unknown tool,
 * guardrail, bad arguments) is a row of its own, begun and ended at once. Progress events add nothing
 * the rows do not show.
 */
export function addAgentEvent(rows: AgentRow[], stepStartedAt: number, event: RunEvent, at: number): void {
  const p = event.payload as Record<string, Json | undefined>;
  if (event.type === 'llm_turn') rows.push(turnRow(rows, stepStartedAt, event, at));
  if (event.type === 'tool_call')
    rows.push({
      kind: 'tool',
      seq: event.seq,
      callId: String(p.call_id),
      tool: String(p.tool),
      args: p.args,
      startedAt: at,
      endedAt: undefined,
      signal: undefined,
      result: undefined,
    });
  if (event.type !== 'tool_result') return;
  let call = rows.find((row): row is ToolCallRow => row.kind === 'tool' && row.callId === String(p.call_id) && row.endedAt === undefined);
  if (!call) {
    call = {
      kind: 'tool',
      seq: event.seq,
      callId: String(p.call_id),
      tool: String(p.tool),
      args: undefined,
      startedAt: at,
      endedAt: undefined,
      signal: undefined,
      result: undefined,
    };
    rows.push(call);
  }
  call.endedAt = at;
  call.signal = textOf(p.signal);
  call.result = p.result;
}
