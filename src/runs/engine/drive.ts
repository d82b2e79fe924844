// A run as this process drives it: what its journal holds, what is pending, and its lease.
import type { RunSealer } from '../personal.js';
import type { Span } from '@opentelemetry/api';
import { runStream, type RecordedRunEvent, type RunEvent } from '../events.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import { evolveRun, type RunState } from '../state.js';

export interface Drive {
  runId: string;
  stream: string;
  workflow: WorkflowDefinition;
  /** State as journaled. */
  committed: RunState;
  /** The run's journal as read or committed here (agent steps resume their conversation from it). */
  recorded: RecordedRunEvent[];
  /** Committed plus what is pending. */
  state: RunState;
  pending: RunEvent[];
  holdsLease: boolean;
  /** performance.now() when the lease was last confirmed in the database (valid for leaseMs from then). */
  leaseSeenAt: number;
  interrupted: boolean;
  /** Another executor advanced the run: stop touching it. */
  fenced: boolean;
  /** A write's COMMIT was cut off in flight: the journal may hold more than `committed`. */
  unsureWrite: boolean;
  /** Resolves once the run is in the journal (its first append committed). */
  markDurable: () => void;
  /** The flush in progress: flushes of one drive run one after the other. */
  flushing: Promise<void>;
  /** Fires when an abort of the run arrives: a model call in flight is cancelled, not waited for. */
  aborted: AbortController;
  /** Ends a hold for the run's wake early (a control event came in); a no-op while nothing is held. */
  nudge: () => void;
  /** The run's span for this drive, while tracing is on (runTracing.ts). */
  span?: Span | undefined;
  /** spec.personal_data: seals the listed keys of what is appended (the drive itself works on clear values). */
  sealer?: RunSealer | undefined;
}

export interface DriveStart {
  runId: string;
  workflow: WorkflowDefinition;
  /** The journal so far (empty for a new run) and the state it folds to. */
  recorded: RecordedRunEvent[];
  committed: RunState;
  /** When the lease was confirmed (performance.now()); absent while the run holds none yet. */
  leaseSeenAt?: number;
  markDurable?: () => void;
}

export function newDrive(start: DriveStart): Drive {
  return {
    runId: start.runId,
    stream: runStream(start.runId),
    workflow: start.workflow,
    committed: start.committed,
    recorded: start.recorded,
    state: start.committed,
    pending: [],
    holdsLease: start.leaseSeenAt !== undefined,
    leaseSeenAt: start.leaseSeenAt ?? 0,
    interrupted: false,
    fenced: false,
    unsureWrite: false,
    markDurable: start.markDurable ?? (() => undefined),
    flushing: Promise.resolve(),
    aborted: new AbortController(),
    nudge: () => undefined,
  };
}

/** Stops a run's drive: its lease was lost or the run was aborted under it. */
export class DriveStopped extends Error {}

/**
 * How many times the run already finished this step, as a step or as an agent's tool: a runner's
 * idempotency key tells the visits (and tool calls) apart, the same after a resume (it is read from the journal).
 */
export function timesRun(drive: Drive, stepId: string): number {
  const isFinishOf = (event: RunEvent) =>
    ((event.type === 'step_completed' || event.type === 'step_failed') && event.data.agent_id === stepId) ||
    (event.type === 'tool_result' && event.data.payload.tool === stepId);
  return drive.recorded.filter(isFinishOf).length + drive.pending.filter(isFinishOf).length;
}

export function applyLocal(state: RunState, event: RunEvent, at: string): RunState {
  return evolveRun(state, event, at, state.version + 1);
}
