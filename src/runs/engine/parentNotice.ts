// A child run's end, told to its parent: child_finished goes on the parent's stream in the same
// transaction as the child's terminal event, so a crash between the two cannot strand a waiting parent.
import { selectStreamEvents, selectStreamVersion } from '../../eventstore/sql.js';
import type { EventTransaction } from '../../eventstore/transaction.js';
import { runEvent, runStream, TERMINAL_EVENT_TYPES, type ChildFinished, type RunEventType } from '../events.js';
import type { RunState } from '../state.js';

/** What the parent hears of a child that ended (`state` is the child's, terminal). */
export function childFinishedOf(state: RunState): ChildFinished {
  const status = state.status === 'completed' || state.status === 'failed' ? state.status : 'aborted';
  return { run_id: state.runId, status, output: status === 'completed' ? state.output : null, error: state.error };
}

/**
 * Appends child_finished to the parent's stream inside `tx`, unless the parent has ended (an aborted
 * parent has aborted its children already). A parent that moves on concurrently makes this a
 * version conflict: the caller's whole commit is retried.
 */
export async function tellParent(tx: EventTransaction, child: RunState): Promise<void> {
  if (child.parentRunId === null) return;
  const stream = runStream(child.parentRunId);
  const version = Number(await selectStreamVersion(tx.client, stream));
  if (version === 0) return;
  const [last] = await selectStreamEvents(tx.client, stream, version - 1, 1);
  if (last && TERMINAL_EVENT_TYPES.includes(last.type as RunEventType)) return;
  await tx.append({ streamId: stream, expectedVersion: version, events: [runEvent('child_finished', childFinishedOf(child))] });
}
