// Run control: pause, resume, abort and steer are events on the run stream, seen by whichever worker runs it.
import { runCommand } from '../eventstore/command.js';
import type { EventStore } from '../eventstore/store.js';
import type { EventMetadata } from '../eventstore/types.js';
import { foldRun, isTerminal, type RunState, type RunStatus } from './state.js';
import { ConflictError, NotFoundError } from '../kernel/errors.js';
import { asRunEvent, runEvent, runStream, type RunEvent } from './events.js';

export type ControlAction = 'pause' | 'resume' | 'abort' | 'steer';

/** Nothing of the run runs in these: a pause takes effect at once. */
const AT_REST: readonly RunStatus[] = ['waiting_human', 'waiting_approval', 'waiting_retry', 'waiting_timer'];

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
