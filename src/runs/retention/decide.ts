// Retention and legal hold of a run, on its own stream `retention-<run id>` (the run's journal is not touched).
import { ConflictError, NotFoundError } from '../../kernel/errors.js';
import type { NewEvent, RecordedEvent } from '../../eventstore/types.js';

export const retentionStream = (runId: string) => `retention-${runId}`;
export const RETENTION_EVENT_TYPES = ['run_hold_placed', 'run_hold_released', 'run_expired'] as const;

export interface RetentionState {
  isHeld: boolean;
  isExpired: boolean;
}

export function foldRetention(events: readonly RecordedEvent[]): RetentionState {
  let state: RetentionState = { isHeld: false, isExpired: false };
  for (const event of events) {
    if (event.type === 'run_hold_placed') state = { ...state, isHeld: true };
    else if (event.type === 'run_hold_released') state = { ...state, isHeld: false };
    else if (event.type === 'run_expired') state = { ...state, isExpired: true };
  }
  return state;
}

export interface RunRef {
  runId: string;
  workflow: string;
}

/** A hold on a run that has expired is refused: its read-model row and personal data are gone. */
export function placeHold(state: RetentionState, run: RunRef, reason: string | null, at: string): NewEvent[] {
  if (state.isExpired) throw new NotFoundError(`Run ${run.runId} expired`);
  if (state.isHeld) return [];
  return [{ type: 'run_hold_placed', data: { run_id: run.runId, workflow: run.workflow, reason, at } }];
}

export function releaseHold(state: RetentionState, run: RunRef, at: string): NewEvent[] {
  if (state.isExpired) throw new NotFoundError(`Run ${run.runId} expired`);
  if (!state.isHeld) throw new ConflictError(`Run ${run.runId} is not held`);
  return [{ type: 'run_hold_released', data: { run_id: run.runId, workflow: run.workflow, at } }];
}

/** A held run never expires; expiring twice appends nothing (of two sweepers, one writes). */
export function expireRun(state: RetentionState, run: RunRef & { endedAt: string; retentionMs: number }, at: string): NewEvent[] {
  if (state.isHeld || state.isExpired) return [];
  return [{ type: 'run_expired', data: { run_id: run.runId, workflow: run.workflow, ended_at: run.endedAt, retention_ms: run.retentionMs, at } }];
}
