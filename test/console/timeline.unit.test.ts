// The console's timeline model (console/src/timeline.ts): bars per step execution, the context after
// each step, retries counted on their bar, and the marks between steps.
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
});
