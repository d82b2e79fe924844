// The console's timeline model (console/src/timeline.ts): bars per step execution, the context after
// each step, retries counted on their bar, an Agent step's LLM turns and tool calls under its bar
// (console/src/agentActivity.ts), and the marks between steps.
import { expect } from 'chai';
import type { RunEvent } from '../../src/client/index.js';
import { buildTimeline } from '../../console/src/timeline.js';

let seq = 0;
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, ms)).toISOString();
const event = (ms: number, type: string, agentId = 'run', payload: Record<string, unknown> = {}, engine = 'Workflow'): RunEvent => ({
  run_id: 'r',
  seq: ++seq,
  ts: at(ms),
  type,
  agent_id: agentId,
  engine,
  payload: payload as RunEvent['payload'],
});

describe('the console timeline model', () => {
  it('draws a bar per step with its duration and signal, and the context after each step', () => {
    const timeline = buildTimeline([
      event(0, 'run_started', 'run', { input: { name: 'ada', _secret: 'x' } }),
      event(10, 'step_started', 'greet', {}, 'Functional'),
      event(60, 'step_completed', 'greet', { signal: 'default', changes: { set: { greeting: 'Hello', _private: 1 }, unset: [] } }, 'Functional'),
      event(60, 'step_started', 'route', {}, 'Router'),
      event(61, 'decision', 'route', { decision: 'true', source: 'router' }, 'Router'),
      event(61, 'step_completed', 'route', { signal: 'true', changes: { set: {}, unset: ['name'] } }, 'Router'),
      event(70, 'run_completed', 'run', { output: {} }),
    ]);
    expect(timeline.startedAt).to.equal(Date.parse(at(0)));
    expect(timeline.endedAt).to.equal(Date.parse(at(70)));
    expect(
      timeline.bars.map(({ stepId, kind, signal, failed, endedAt, startedAt }) => ({ stepId, kind, signal, failed, ms: endedAt! - startedAt })),
    ).to.deep.equal([
      { stepId: 'greet', kind: 'Functional', signal: 'default', failed: false, ms: 50 },
      { stepId: 'route', kind: 'Router', signal: 'true', failed: false, ms: 1 },
    ]);
    expect(timeline.bars[0]!.context).to.deep.equal({ name: 'ada', greeting: 'Hello' });
    expect(timeline.bars[1]!.context).to.deep.equal({ greeting: 'Hello' });
    expect(timeline.marks.map((mark) => mark.label)).to.deep.equal(['route: decision true', 'run completed']);
  });

  it('keeps a step open while it runs, counts its failed attempts, and marks timers, children and control', () => {
    const timeline = buildTimeline([
      event(0, 'run_started', 'run', { input: {} }),
      event(5, 'step_started', 'charge', {}, 'APICall'),
      event(30, 'step_attempt_failed', 'charge', { attempt: 1, next_attempt_at: at(1030), error: { message: 'boom' } }, 'APICall'),
      event(1030, 'step_attempt_failed', 'charge', { attempt: 2, next_attempt_at: at(3030), error: { message: 'boom' } }, 'APICall'),
      event(3100, 'step_failed', 'charge', { signal: 'error', changes: { set: { failure: 'boom' } } }, 'APICall'),
      event(3100, 'step_started', 'nap', {}, 'Wait'),
      event(3101, 'timer_started', 'nap', { fires_at: at(9000) }, 'Wait'),
      event(3200, 'paused', 'run', { by: 'u' }),
      event(3300, 'child_started', 'sub', { run_id: 'c1', workflow: 'child', wait: true }, 'Workflow'),
    ]);
    expect(timeline.endedAt).to.equal(undefined);
    expect(timeline.bars.map(({ stepId, failed, attempts, endedAt }) => ({ stepId, failed, attempts, isOpen: endedAt === undefined }))).to.deep.equal([
      { stepId: 'charge', failed: true, attempts: 2, isOpen: false },
      { stepId: 'nap', failed: false, attempts: 0, isOpen: true },
    ]);
    expect(timeline.bars[0]!.context).to.deep.equal({ failure: 'boom' });
    expect(timeline.lastEventAt).to.equal(Date.parse(at(3300)));
    expect(timeline.marks.map((mark) => mark.type)).to.deep.equal(['step_attempt_failed', 'step_attempt_failed', 'timer_started', 'paused', 'child_started']);
    expect(timeline.marks[4]!.label).to.equal('sub: child run c1 (child)');
  });

  it('puts an Agent step’s LLM turns and tool calls under its bar: a turn from the last answer to the model’s, a call from call to result', () => {
    const answer = (content: string | null, calls: string[]) => ({
      content,
      tool_calls: calls.map((name, index) => ({ id: `c${index}`, name, arguments: '{}' })),
      usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
    });
    const timeline = buildTimeline([
      event(0, 'run_started', 'run', { input: { question: 'q' } }),
      event(10, 'step_started', 'agent', {}, 'Agent'),
      event(400, 'llm_turn', 'agent', { iteration: 1, steers: [], response: answer(null, ['lookup', 'echo']), tokens_used: 120, model: 'm1' }, 'Agent'),
      event(400, 'agent_progress', 'agent', { type: 'iteration', iteration: 1, tokens_used: 120, tool_calls: 2 }, 'Agent'),
      event(401, 'tool_call', 'agent', { iteration: 1, call_id: 'c0', tool: 'lookup', args: { query: 'alpha' } }, 'Agent'),
      event(430, 'tool_result', 'agent', { iteration: 1, call_id: 'c0', tool: 'lookup', signal: 'default', result: { hits: 3 }, changes: {} }, 'Agent'),
      // A call the service answered itself (an unknown tool): a result without its call.
      event(431, 'tool_result', 'agent', { iteration: 1, call_id: 'c1', tool: 'echo', signal: 'error', result: { error: 'no such tool' } }, 'Agent'),
      event(900, 'llm_turn', 'agent', { iteration: 2, steers: ['be brief'], response: answer('Found 3 hits.', []), tokens_used: 180, model: 'm1' }, 'Agent'),
      event(901, 'decision', 'agent', { decision: 'default', source: 'agent' }, 'Agent'),
      event(901, 'step_completed', 'agent', { signal: 'default', changes: { set: { answer: 'Found 3 hits.' } } }, 'Agent'),
      // A turn of a step that never started in this journal stays a mark.
      event(950, 'llm_turn', 'ghost', { iteration: 1, response: answer('boo', []), tokens_used: 5, model: 'm1' }, 'Agent'),
      event(960, 'run_completed', 'run', { output: {} }),
    ]);
    const bar = timeline.bars[0]!;
    const rows = bar.activity.map((row) =>
      row.kind === 'turn'
        ? {
            kind: row.kind,
            iteration: row.iteration,
            from: row.startedAt - bar.startedAt,
            to: row.endedAt - bar.startedAt,
            asksFor: row.asksFor,
            answer: row.answer,
            steers: row.steers,
            tokens: row.tokensUsed,
            model: row.model,
          }
        : {
            kind: row.kind,
            tool: row.tool,
            from: row.startedAt - bar.startedAt,
            to: row.endedAt! - bar.startedAt,
            args: row.args,
            signal: row.signal,
            result: row.result,
          },
    );
    expect(rows).to.deep.equal([
      { kind: 'turn', iteration: 1, from: 0, to: 390, asksFor: ['lookup', 'echo'], answer: null, steers: [], tokens: 120, model: 'm1' },
      { kind: 'tool', tool: 'lookup', from: 391, to: 420, args: { query: 'alpha' }, signal: 'default', result: { hits: 3 } },
      { kind: 'tool', tool: 'echo', from: 421, to: 421, args: undefined, signal: 'error', result: { error: 'no such tool' } },
      { kind: 'turn', iteration: 2, from: 421, to: 890, asksFor: [], answer: 'Found 3 hits.', steers: ['be brief'], tokens: 180, model: 'm1' },
    ]);
    expect(timeline.marks.map((mark) => mark.label)).to.deep.equal(['agent: decision default', 'ghost: LLM turn 1 (5 tokens)', 'run completed']);
  });

  it('keeps a tool call open while its tool runs (or waits for an approval)', () => {
    const timeline = buildTimeline([
      event(0, 'run_started', 'run', { input: {} }),
      event(0, 'step_started', 'agent', {}, 'Agent'),
      event(50, 'tool_call', 'agent', { iteration: 1, call_id: 'c0', tool: 'file_ticket', args: { subject: 'x' } }, 'Agent'),
      event(51, 'approval_requested', 'agent', { approval: {} }, 'Agent'),
    ]);
    const [call] = timeline.bars[0]!.activity;
    expect(call).to.deep.include({ kind: 'tool', tool: 'file_ticket', endedAt: undefined, signal: undefined });
    expect(timeline.marks.map((mark) => mark.type)).to.deep.equal(['approval_requested']);
  });
});
