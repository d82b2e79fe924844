// What became of a run start in the journal, and the answer for a run the database did not record.
import { UnavailableError } from '../../kernel/errors.js';
import type { Drive } from './drive.js';
import type { RunState } from '../state.js';

/**
 * A run start as the journal has it: journaled (`state`: as journaled then), not recorded, or
 * unknown (the COMMIT that would have journaled it was cut off in flight).
 */
export type RunRecording = { kind: 'journaled'; state: RunState } | { kind: 'not_recorded' } | { kind: 'unknown' };

/** What the journal holds of a drive's run as far as this process knows. */
export function recordingOf(drive: Drive): RunRecording {
  if (drive.committed.exists) return { kind: 'journaled', state: drive.committed };
  return { kind: drive.unsureWrite ? 'unknown' : 'not_recorded' };
}

/**
 * The answer for a run start the database did not record (503, Retry-After): nothing to look up, or,
 * when a cut-off COMMIT may have recorded it, the run to look up before starting it again.
 */
export function notRecordedError(runId: string, recording: Exclude<RunRecording, { kind: 'journaled' }>, cause?: unknown): UnavailableError {
  if (recording.kind === 'not_recorded') {
    return new UnavailableError('The database is unavailable: the run was not recorded. Start it again after Retry-After seconds', {}, { cause });
  }
  return new UnavailableError(
    `The database connection was lost while the run was being recorded: it may exist. GET /api/runs/${runId} tells once the database is back (404: it was not recorded)`,
    { runId },
    { cause },
  );
}
