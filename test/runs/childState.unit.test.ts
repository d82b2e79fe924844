// A parent's state around its child runs (pure): waiting_child while a `wait: true` child runs, kept
// through a pause, and queued once that child's end is journaled; a fire-and-forget child's end changes nothing.
import { expect } from 'chai';
import { runEvent, type RunEvent } from '../../src/runs/events.js';
import { evolveRun, initialRunState, type RunState } from '../../src/runs/state.js';

const step = { id: 'call', kind: 'Workflow' };
const fold = (events: RunEvent[]): RunState => events.reduce((state, e, i) => evolveRun(state, e, '2026-01-01T00:00:00Z', i + 1), initialRunState);
const started = runEvent('run_started', {
  run_id: 'p',
  workflow: 'parent',
  schema_version: 'v1',
  input: {},
  principal: null,
  trigger: 'api',
  first_step: 'call',
});
const child = (runId: string, wait: boolean) => runEvent('child_started', { run_id: runId, workflow: 'kid', schema_version: 'v1', wait }, step);
const ended = (runId: string, status: 'completed' | 'failed' | 'aborted' = 'completed') =>
  runEvent('child_finished', { run_id: runId, status, output: status === 'completed' ? 42 : null, error: null });

describe('run state: child runs', () => {
  it('a waited-for child makes the parent waiting_child; its end queues the parent with the outcome', () => {
    const waiting = fold([started, runEvent('step_started', {}, step), child('c1', true)]);
    expect(waiting).to.include({ status: 'waiting_child', awaitedChild: 'c1', childFinished: null });
    const woken = fold([started, runEvent('step_started', {}, step), child('c1', true), ended('c1')]);
    expect(woken).to.include({ status: 'queued', awaitedChild: null });
    expect(woken.childFinished).to.deep.include({ run_id: 'c1', status: 'completed', output: 42 });
    const completed = evolveRun(
      woken,
      runEvent('step_completed', { signal: 'default', duration_ms: 0, changes: { set: { r: 42 }, unset: [] }, next: null }, step),
      't',
      5,
    );
    expect(completed.childFinished).to.equal(null);
  });

  it('a fire-and-forget child, or another child, does not wake or hold the parent', () => {
    const forgot = fold([started, runEvent('step_started', {}, step), child('c1', false)]);
    expect(forgot).to.include({ status: 'running', awaitedChild: null });
    expect(fold([started, runEvent('step_started', {}, step), child('c1', false), ended('c1')])).to.include({ status: 'running', childFinished: null });
    expect(fold([started, runEvent('step_started', {}, step), child('c2', true), ended('c1')])).to.include({ status: 'waiting_child', awaitedChild: 'c2' });
  });

  it('a paused parent keeps waiting at its resume, or goes on when its child ended while it was paused', () => {
    const base = [started, runEvent('step_started', {}, step), child('c1', true), runEvent('paused', { by: 'u' })];
    expect(fold(base)).to.include({ status: 'paused', awaitedChild: 'c1' });
    expect(fold([...base, runEvent('resumed', { by: 'u' })])).to.include({ status: 'waiting_child' });
    expect(fold([...base, ended('c1', 'aborted')])).to.include({ status: 'paused', awaitedChild: null });
    expect(fold([...base, ended('c1', 'aborted'), runEvent('resumed', { by: 'u' })])).to.include({ status: 'queued' });
  });

  it('run_started carries the parent and the depth; an ended parent ignores a late child end', () => {
    const kid = fold([
      runEvent('run_started', {
        run_id: 'c',
        workflow: 'kid',
        schema_version: 'v1',
        input: {},
        principal: null,
        trigger: 'workflow',
        parent_run_id: 'p',
        depth: 3,
      }),
    ]);
    expect(kid).to.include({ parentRunId: 'p', depth: 3 });
    expect(fold([started])).to.include({ parentRunId: null, depth: 0 });
    const aborted = fold([started, child('c1', true), runEvent('run_aborted', { by: 'u', reason: 'r' }), ended('c1')]);
    expect(aborted).to.include({ status: 'aborted', childFinished: null });
  });

  it('a parent waiting for its child gives up its concurrency slot; one that fires and forgets keeps it', () => {
    const holding = [started, runEvent('run_dequeued', { key: '' }), runEvent('step_started', {}, step)];
    expect(fold(holding).slot).to.deep.equal({ key: '', state: 'held' });
    expect(fold([...holding, child('c1', true)]).slot).to.equal(null);
    expect(fold([...holding, child('c1', false)]).slot).to.deep.equal({ key: '', state: 'held' });
  });
});
