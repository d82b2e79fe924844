// An Agent step's state, folded from the step's events in the journal (pure): a resume continues the
// conversation from them without asking the model (or running a tool) again, and the loop advances
// by the same evolve as it appends.
import type { ChatAnswer, ChatMessage } from '../../agents/llm.js';
import type { JsonObject } from '../../kernel/json.js';
import type { ApprovalDecided, RunEvent, ToolResult } from '../events.js';
import { applyChanges } from '../../workflows/template.js';

export interface AgentState {
  /** Model answers so far (the turn the latest answer is). */
  iteration: number;
  /** Tokens used by the step so far. */
  tokens: number;
  /** What the model is sent next: the opening, then each turn's steers and answer, and the tool results. */
  conversation: readonly ChatMessage[];
  /** The run context with this step's tool results on top. */
  context: JsonObject;
  lastAnswer: ChatAnswer | undefined;
  /** Tool calls journaled (tool_call) and answered (tool_result), by callKey. */
  calls: ReadonlySet<string>;
  results: ReadonlySet<string>;
  /** Approvals asked for (call key -> approval id), and the decisions on them (by call key). */
  requested: ReadonlyMap<string, string>;
  decisions: ReadonlyMap<string, ApprovalDecided>;
}

/**
 * A tool call's identity: the turn that asked for it and the id the model gave it (a model may use
 * the same id again in a later turn).
 */
export const callKey = (turn: number, callId: string): string => `${turn}:${callId}`;

export function initialAgentState(context: JsonObject, opening: readonly ChatMessage[]): AgentState {
  return {
    iteration: 0,
    tokens: 0,
    conversation: opening,
    context,
    lastAnswer: undefined,
    calls: new Set(),
    results: new Set(),
    requested: new Map(),
    decisions: new Map(),
  };
}

/** The state after the step's events so far (those after its latest step_started). */
export function foldAgentEvents(events: readonly RunEvent[], from: AgentState): AgentState {
  return events.reduce(evolveAgent, from);
}

export function evolveAgent(state: AgentState, event: RunEvent): AgentState {
  switch (event.type) {
    case 'llm_turn': {
      const { iteration, tokens_used, steers = [], response } = event.data.payload;
      const conversation = [...state.conversation, ...steers.map(userMessage), assistantMessage(response)];
      return { ...state, iteration, tokens: tokens_used ?? 0, conversation, lastAnswer: response };
    }
    case 'tool_call': {
      const { payload } = event.data;
      return { ...state, calls: new Set(state.calls).add(callKey(payload.iteration ?? state.iteration, payload.call_id)) };
    }
    case 'tool_result': {
      const { payload } = event.data;
      return {
        ...state,
        results: new Set(state.results).add(callKey(payload.iteration ?? state.iteration, payload.call_id)),
        context: applyChanges(state.context, { set: payload.changes ?? {}, unset: [] }),
        conversation: [...state.conversation, toolMessage(payload)],
      };
    }
    case 'approval_requested': {
      const { approval } = event.data.payload;
      if (approval.call_id === undefined) return state;
      return { ...state, requested: new Map(state.requested).set(callKey(state.iteration, approval.call_id), approval.approval_id) };
    }
    case 'approval_decided': {
      // A decision belongs to the approval this step asked for in the same turn.
      const decided = event.data.payload;
      if (decided.call_id === undefined) return state;
      const asked = callKey(state.iteration, decided.call_id);
      if (state.requested.get(asked) !== decided.approval_id) return state;
      return { ...state, decisions: new Map(state.decisions).set(asked, decided) };
    }
    default:
      return state;
  }
}

export function userMessage(content: string): ChatMessage {
  return { role: 'user', content };
}

function assistantMessage(answer: ChatAnswer): ChatMessage {
  return {
    role: 'assistant',
    content: answer.content,
    ...(answer.tool_calls.length > 0
      ? { tool_calls: answer.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) }
      : {}),
  };
}

/** The model is told what the journal says, so a resumed conversation is the same one. */
function toolMessage(result: ToolResult): ChatMessage {
  return { role: 'tool', tool_call_id: result.call_id, content: JSON.stringify({ signal: result.signal ?? null, result: result.result ?? null }) };
}
