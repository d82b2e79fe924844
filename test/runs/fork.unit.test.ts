// decideFork: where a fork cuts its source's journal (the start of the step's latest visit, a retried
// visit included), what it copies (not the source's pauses), how copies are marked, and its refusals.
import { expect } from 'chai';
import type { RecordedEvent } from '../../src/eventstore/types.js';
import { AppError } from '../../src/kernel/errors.js';
import { decideFork, latestVisitStart } from '../../src/runs/fork.js';
import { foldRun } from '../../src/runs/state.js';
import { asRunEvent, copiedFromOf, runEvent, type RecordedRunEvent, type RunEvent } from '../../src/runs/events.js';
import type { StepDefinition, WorkflowDefinition } from '../../src/workflows/definition.js';

const A = { id: 'a', kind: 'Functional' };
const B = { id: 'b', kind: 'APICall' };
const C = { id: 'c', kind: 'Functional' };
const workflow = { name: 'flow', version: 'v1', steps: [A, B, C] as StepDefinition[] } as WorkflowDefinition;
const SOURCE = '11111111-1111-4111-8111-111111111111';
const FORK = '22222222-2222-4222-8222-222222222222';

const started = runEvent('run_started', {
  run_id: SOURCE,
  workflow: 'flow',
  schema_version: 'v1',
  input: { x: 1 },
  principal: null,
  trigger: 'api',
  first_step: 'a',
});
const stepStarted = (step: { id: string; kind: string }) => runEvent('step_started', {}, step);
const completed = (step: { id: string; kind: string }, next: string | null, set: Record<string, number> = {}) =>
  runEvent('step_completed', { signal: 'default', duration_ms: 1, changes: { set, unset: [] }, next }, step);
const attemptFailed = (step: { id: string; kind: string }, attempt: number) =>
  runEvent(
    'step_attempt_failed',
    { attempt, error: { message: 'down', details: '', name: 'Error' }, next_attempt_at: '2030-01-01T00:00:00.000Z', duration_ms: 1 },
    step,
  );

/** The events as the store gives them back: global positions 100, 101, ... */
function recorded(events: RunEvent[]): RecordedRunEvent[] {
  return events.map((event, index) =>
    asRunEvent({
      ...event,
      globalPosition: 100 + index,
      streamId: `run-${SOURCE}`,
      streamType: 'run',
      streamPosition: index + 1,
      metadata: event.metadata ?? {},
      transactionId: '1',
      recordedAt: '2030-01-01T00:00:00.000Z',
      hash: null,
    } as RecordedEvent),
  );
}

const fork = (journal: RunEvent[], fromStep: string) =>
  decideFork({ sourceRunId: SOURCE, journal: recorded(journal), workflow, fromStep, input: { x: 2 }, principal: null, runId: FORK });

describe('decideFork', () => {
  it('starts the fork with its own run_started and copies, marked, every event before the step', () => {
    const journal = [started, stepStarted(A), completed(A, 'b', { y: 1 }), stepStarted(B), runEvent('run_failed', { error: { message: 'no', details: '' } })];
    const events = fork(journal, 'b');
    expect(events[0]!.type).to.equal('run_started');
    expect(events[0]!.data.payload).to.deep.include({
      run_id: FORK,
      input: { x: 2 },
      trigger: 'fork',
      first_step: 'a',
      forked_from: { run_id: SOURCE, step_id: 'b' },
    });
    expect(copiedFromOf(events[0]!)).to.equal(null);
    expect(events.slice(1).map((e) => [e.type, e.data, copiedFromOf(e)])).to.deep.equal([
      ['step_started', stepStarted(A).data, { run_id: SOURCE, global_position: 101 }],
      ['step_completed', completed(A, 'b', { y: 1 }).data, { run_id: SOURCE, global_position: 102 }],
    ]);
    // Folded, the fork is where the engine resumes a run: the step to run next is `b`, with the copied context.
    const state = foldRun(recorded(events));
    expect(state).to.include({ runId: FORK, nextStep: 'b', status: 'running' });
    expect(state.context).to.deep.equal({ x: 2, y: 1 });
    expect(state.forkedFrom).to.deep.equal({ run_id: SOURCE, step_id: 'b' });
    expect(state.trigger).to.deep.equal({ type: 'fork' });
  });

  it('forked from the first step, copies nothing: the fork starts like a new run', () => {
    const events = fork([started, stepStarted(A), runEvent('run_failed', { error: { message: 'no', details: '' } })], 'a');
    expect(events.map((e) => e.type)).to.deep.equal(['run_started']);
    expect(foldRun(recorded(events))).to.include({ status: 'queued', nextStep: 'a' });
  });

  it("cuts at the first step_started of the step's latest visit: a retried visit is re-run whole, an earlier visit is copied", () => {
    const journal = [
      started,
      stepStarted(A),
      completed(A, 'b'),
      stepStarted(B),
      completed(B, 'a'),
      stepStarted(A),
      completed(A, 'b'),
      stepStarted(B),
      attemptFailed(B, 1),
      stepStarted(B),
      attemptFailed(B, 2),
      stepStarted(B),
    ];
    expect(latestVisitStart(journal, 'b')).to.equal(7);
    expect(latestVisitStart(journal, 'a')).to.equal(5);
    expect(latestVisitStart(journal, 'c')).to.equal(undefined);
    const events = fork(journal, 'b');
    expect(events.slice(1).map((e) => `${e.type}:${e.data.agent_id}`)).to.deep.equal([
      'step_started:a',
      'step_completed:a',
      'step_started:b',
      'step_completed:b',
      'step_started:a',
      'step_completed:a',
    ]);
    expect(events.some((e) => e.type === 'step_attempt_failed')).to.equal(false);
  });

  it("leaves the source's pauses out (the fork starts unpaused) and keeps its steers (an agent's consumed steers stay consumed)", () => {
    const journal = [
      started,
      runEvent('pause_requested', { by: 'u' }),
      stepStarted(A),
      completed(A, 'b'),
      runEvent('paused', { by: 'u' }),
      runEvent('steered', { by: 'u', message: 'look again' }),
      runEvent('resumed', { by: 'u' }),
      stepStarted(B),
    ];
    const events = fork(journal, 'b');
    expect(events.map((e) => e.type)).to.deep.equal(['run_started', 'step_started', 'step_completed', 'steered']);
    expect(foldRun(recorded(events))).to.include({ status: 'running', pauseRequestedBy: null });
  });

  it('refuses a step the workflow does not have (NOT_FOUND) and one the source never reached (CONFLICT)', () => {
    const journal = [started, stepStarted(A)];
    const codeOf = (fromStep: string) => {
      try {
        fork(journal, fromStep);
        return null;
      } catch (error) {
        return error instanceof AppError ? error.code : String(error);
      }
    };
    expect(codeOf('z')).to.equal('NOT_FOUND');
    expect(codeOf('c')).to.equal('CONFLICT');
  });
});
