// Run control: pause, resume, abort and steer are events on the run stream, seen by whichever worker runs it.
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import type { NewEvent, RecordedEvent } from '../eventstore/types.js';
import { foldRun, isTerminal, type RunState, type RunStatus } from './state.js';
import { ConflictError, NotFoundError } from '../kernel/errors.js';
import { runsTotal } from '../metrics/registry.js';
import { asRunEvent, copiedFromOf, runEvent, runStream, type RunEvent } from './events.js';

export type ControlAction = 'pause' | 'resume' | 'abort' | 'steer';

/** Nothing of the run runs in these: a pause takes effect at once. */
const AT_REST: readonly RunStatus[] = ['waiting_human', 'waiting_approval', 'waiting_retry', 'waiting_timer', 'waiting_child'];

/** Pure: the control event for the action, or a 409 when the run is not in a state that takes it. */
export function decideControl(state: RunState, action: ControlAction, by: string, message?: string): RunEvent | null {
  if (!state.exists) throw new NotFoundError('Run not found');
  if (isTerminal(state.status)) throw new ConflictError(`Run is ${state.status}: it takes no more control requests`);
  switch (action) {
    case 'pause':
      if (state.status === 'paused' || state.pauseRequestedBy !== null) return null;
      // Paused at once only when nothing of the run is running (it waits on a person or a time);
      // otherwise the executor pauses it once the step in flight has its outcome journaled.
      // A run queued for a concurrency slot runs nothing either (its pause gives up its place; a resume queues it again in arrival order).
      return AT_REST.includes(state.status) || state.slot?.state === 'waiting' ? runEvent('paused', { by }) : runEvent('pause_requested', { by });
    case 'resume':
      if (state.status !== 'paused' && state.pauseRequestedBy === null) throw new ConflictError(`Run is ${state.status}, not paused`);
      return runEvent('resumed', { by });
    case 'abort':
      // The approval it waited on, if any, is cancelled with it (the approvals read model says so).
      return runEvent('run_aborted', { by, reason: message ?? 'aborted on request', ...(state.approval ? { approval_id: state.approval.approval_id } : {}) });
    case 'steer':
      return runEvent('steered', { by, message: message ?? '' });
  }
}

export async function controlRun(
  store: EventStore,
  runId: string,
  action: ControlAction,
  by: string,
  message?: string,
  metadata?: EventMetadata,
): Promise<void> {
  if (action === 'abort') return abortRunTree(store, runId, by, message ?? 'aborted on request', metadata);
  const stream = runStream(runId);
  await runCommand(store, {
    streams: [stream],
    decide: (read) => {
      const event = decideControl(foldRun(read.get(stream)!.map((e) => asRunEvent(e))), action, by, message);
      return { events: event ? { [stream]: [event] } : {}, result: undefined };
    },
    ...(metadata ? { metadata } : {}),
  });
}

const stateOf = (events: readonly RecordedEvent[] | undefined): RunState => foldRun((events ?? []).map((e) => asRunEvent(e)));

/** The runs a run started with Workflow steps (both `wait` kinds), from its journal; a fork's copies name its source's children, not its own. */
function childrenIn(events: readonly RecordedEvent[]): string[] {
  return events.flatMap((e) => {
    const event = asRunEvent(e);
    return event.type === 'child_started' && copiedFromOf(e) === null ? [event.data.payload.run_id] : [];
  });
}

/** The run, its parent (told of the abort) and every run below it (aborted with it): read level by level. */
async function treeStreams(store: EventStore, runId: string): Promise<string[]> {
  const root = await store.readWholeStream(runStream(runId));
  const parent = stateOf(root).parentRunId;
  const streams = [runStream(runId), ...(parent ? [runStream(parent)] : [])];
  for (let level = childrenIn(root); level.length > 0;) {
    streams.push(...level.map(runStream));
    const journals = await Promise.all(level.map((id) => store.readWholeStream(runStream(id))));
    level = journals.flatMap(childrenIn);
  }
  return streams;
}

/**
 * An abort takes the run's running children (and theirs) with it, in one commit; a waiting parent
 * hears it as the child's end (child_finished, status aborted) and takes its error route.
 */
async function abortRunTree(store: EventStore, runId: string, by: string, reason: string, metadata?: EventMetadata): Promise<void> {
  const stream = runStream(runId);
  // The workflows of the runs this commit ends (decide may run again after a conflict: the last one counts).
  let ended: string[] = [];
  await runCommand(store, {
    streams: () => treeStreams(store, runId),
    decide: (read) => {
      const run = stateOf(read.get(stream));
      const events: Record<string, NewEvent[]> = { [stream]: [decideControl(run, 'abort', by, reason)!] };
      ended = [run.workflow];
      const below = [...read.keys()].filter((s) => s !== stream && s !== runStream(run.parentRunId ?? ''));
      for (const child of below) {
        const state = stateOf(read.get(child));
        if (!state.exists || isTerminal(state.status)) continue;
        events[child] = [decideControl(state, 'abort', by, `parent run ${runId} was aborted`)!];
        ended.push(state.workflow);
      }
      const parent = run.parentRunId ? stateOf(read.get(runStream(run.parentRunId))) : null;
      if (parent?.exists && !isTerminal(parent.status)) {
        const error = { message: reason, details: `aborted by ${by}` };
        events[runStream(parent.runId)] = [runEvent('child_finished', { run_id: runId, status: 'aborted', output: null, error })];
      }
      return { events, result: undefined };
    },
    ...(metadata ? { metadata } : {}),
  });
  for (const workflow of ended) runsTotal.inc({ workflow, status: 'aborted' });
}
