// A run's journal as the timeline draws it: one bar per step execution on a time axis, the context
// after each step (the run's input with each step's changes applied), an Agent step's LLM turns and
// tool calls under its bar, and the marks in between.
import type { Json, JsonRecord, RunEvent } from '../../src/client/index.js';
import { AGENT_EVENTS, addAgentEvent, type AgentRow } from './agentActivity.js';

export interface StepBar {
  stepId: string;
  kind: string;
  startedAt: number;
  /** Undefined while the step runs. */
  endedAt: number | undefined;
  signal: string | undefined;
  failed: boolean;
  /** Failed attempts before this one (retries). */
  attempts: number;
  context: JsonRecord | undefined;
  /** An Agent step's LLM turns and tool calls, in journal order. */
  activity: AgentRow[];
}

export interface Mark {
  seq: number;
  at: number;
  type: string;
  label: string;
}

export interface Timeline {
  bars: StepBar[];
  marks: Mark[];
  startedAt: number | undefined;
  endedAt: number | undefined;
  lastEventAt: number | undefined;
  context: JsonRecord;
}

const TERMINAL = new Set(['run_completed', 'run_failed', 'run_aborted']);

const asRecord = (value: unknown): JsonRecord => (value && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord) : {});

/** The context after a step: `changes.set` merged in, `changes.unset` removed; keys starting with `_` stay private. */
function applyChanges(context: JsonRecord, changes: unknown): JsonRecord {
  const { set, unset } = asRecord(changes) as { set?: Json; unset?: Json };
  const next: JsonRecord = { ...context, ...asRecord(set) };
  for (const key of Array.isArray(unset) ? unset : []) delete next[String(key)];
  return Object.fromEntries(Object.entries(next).filter(([key]) => !key.startsWith('_')));
}

/** The words a mark shows for a run-level or in-between event; undefined for step bar events. */
export function markLabel(event: RunEvent): string | undefined {
  const p = event.payload as Record<string, Json | undefined>;
  switch (event.type) {
    case 'run_started':
    case 'step_started':
    case 'step_completed':
    case 'step_failed':
      return undefined;
    case 'decision':
      return `${event.agent_id}: decision ${String(p.decision)}`;
    case 'step_attempt_failed':
      return `${event.agent_id}: attempt ${String(p.attempt)} failed, retry at ${String(p.next_attempt_at)}`;
    case 'timer_started':
      return `${event.agent_id}: timer until ${String(p.fires_at)}`;
    case 'timer_fired':
      return `${event.agent_id}: timer fired`;
    case 'child_started':
      return `${event.agent_id}: child run ${String(p.run_id)} (${String(p.workflow)})`;
    case 'child_finished':
      return `${event.agent_id}: child run ${String(p.run_id)} ${String(p.status)}`;
    case 'approval_requested':
      return `${event.agent_id}: approval requested`;
    case 'approval_decided':
      return `${event.agent_id}: approval ${String(p.decision)}`;
    case 'agent_progress':
      return undefined;
    case 'llm_turn':
      return `${event.agent_id}: LLM turn ${String(p.iteration)}${p.tokens_used !== undefined ? ` (${String(p.tokens_used)} tokens)` : ''}`;
    case 'tool_call':
      return `${event.agent_id}: calls ${String(p.tool)}`;
    case 'tool_result':
      return `${event.agent_id}: ${String(p.tool)} answered${p.signal ? ` (${String(p.signal)})` : ''}`;
    case 'steered':
      return `steered: ${String(p.message)}`;
    case 'run_failed':
      return `failed: ${String(asRecord(p.error).message ?? '')}`;
    case 'run_aborted':
      return `aborted${p.reason ? `: ${String(p.reason)}` : ''}`;
    default:
      return event.type.replaceAll('_', ' ');
  }
}

/** A step's bar from the event that opened it (a step_started, or an end whose start was not seen). */
function newBar(event: RunEvent, at: number): StepBar {
  return {
    stepId: event.agent_id,
    kind: event.engine,
    startedAt: at,
    endedAt: undefined,
    signal: undefined,
    failed: false,
    attempts: 0,
    context: undefined,
    activity: [],
  };
}

const openBarOf = (timeline: Timeline, stepId: string): StepBar | undefined =>
  [...timeline.bars].reverse().find((bar) => bar.stepId === stepId && bar.endedAt === undefined);

/** The bar an event of `stepId` belongs to: the one running, else its latest. */
const barOf = (timeline: Timeline, stepId: string): StepBar | undefined =>
  openBarOf(timeline, stepId) ?? [...timeline.bars].reverse().find((bar) => bar.stepId === stepId);

function onStepEvent(timeline: Timeline, event: RunEvent, at: number): void {
  const open = openBarOf(timeline, event.agent_id);
  if (event.type === 'step_started') {
    if (!open) timeline.bars.push(newBar(event, at));
    return;
  }
  if (event.type === 'step_attempt_failed') {
    if (open) open.attempts += 1;
    return;
  }
  const bar = open ?? newBar(event, at);
  if (!open) timeline.bars.push(bar);
  bar.endedAt = at;
  bar.signal = typeof event.payload.signal === 'string' ? event.payload.signal : undefined;
  bar.failed = event.type === 'step_failed';
  timeline.context = applyChanges(timeline.context, event.payload.changes);
  bar.context = timeline.context;
}

/** Folds the journal, in seq order, into the timeline. */
export function buildTimeline(events: readonly RunEvent[]): Timeline {
  const timeline: Timeline = { bars: [], marks: [], startedAt: undefined, endedAt: undefined, lastEventAt: undefined, context: {} };
  for (const event of events) {
    const at = Date.parse(event.ts);
    timeline.lastEventAt = at;
    if (event.type === 'run_started') {
      timeline.startedAt = at;
      timeline.context = applyChanges({}, { set: event.payload.input });
    }
    if (['step_started', 'step_completed', 'step_failed', 'step_attempt_failed'].includes(event.type)) onStepEvent(timeline, event, at);
    if (TERMINAL.has(event.type)) timeline.endedAt = at;
    // An agent's turns and calls go under its step's bar; one whose step was never seen stays a mark.
    const agentBar = AGENT_EVENTS.has(event.type) ? barOf(timeline, event.agent_id) : undefined;
    if (agentBar) {
      addAgentEvent(agentBar.activity, agentBar.startedAt, event, at);
      continue;
    }
    const label = markLabel(event);
    if (label !== undefined) timeline.marks.push({ seq: event.seq, at, type: event.type, label });
  }
  return timeline;
}
