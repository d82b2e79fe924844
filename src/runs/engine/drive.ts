// A run as this process drives it: journaled and pending state, and writing it to the run journal.
import { isCommitOutcomeUnknown } from '../../db/connectionLoss.js';
import type { EventStore, EventTransaction } from '../../eventstore/store.js';
import type { NewEvent, RecordedEvent } from '../../eventstore/types.js';
import type { Clock } from '../../kernel/clock.js';
import { VersionConflictError } from '../../kernel/errors.js';
import { CONTROL_EVENT_TYPES, runEvent, type RunEventData, type RunEventType } from '../events.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import { LeaseLost, type JournalEntry, type RunJournal } from './journal.js';
import { evolveRun, foldRun, isTerminal, type RunState } from '../state.js';

export interface Drive {
  runId: string;
  stream: string;
  workflow: WorkflowDefinition;
  /** State as journaled. */
  committed: RunState;
  /** The journal as committed (agent steps resume their conversation from it). */
  journal: RecordedEvent[];
  /** Committed plus what is pending. */
  state: RunState;
  pending: NewEvent[];
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
}

/** Stops a run's drive: its lease was lost or the run was aborted under it. */
export class DriveStopped extends Error {}

const FINISHED_STEP: readonly string[] = ['step_completed', 'step_failed'];

/**
 * How many times the run already finished this step, as a step or as an agent's tool: a runner's
 * idempotency key tells the visits (and tool calls) apart, the same after a resume (it is read from the journal).
 */
export function timesRun(drive: Drive, stepId: string): number {
  return [...drive.journal, ...drive.pending].filter((e) => {
    const data = e.data as RunEventData;
    return (FINISHED_STEP.includes(e.type) && data.agent_id === stepId) || (e.type === 'tool_result' && data.payload.tool === stepId);
  }).length;
}

export function applyLocal(state: RunState, event: NewEvent, at: string): RunState {
  return evolveRun(state, event.type, event.data as RunEventData, at, state.version + 1);
}

/** Pending events in, journaled events out: what every step kind uses to record its progress. */
export class DriveWriter {
  constructor(
    private readonly store: EventStore,
    private readonly journal: RunJournal,
    private readonly clock: Clock,
  ) {}

  now(): string {
    return this.clock.now().toISOString();
  }

  push(drive: Drive, event: NewEvent): void {
    drive.pending.push(event);
    drive.state = applyLocal(drive.state, event, this.now());
  }

  /**
   * Appends what is pending (plus what `work` produces inside the same transaction) at the journaled
   * version. A lost race is merged when only control events came in between; a foreign step event
   * means another executor holds the run, and this one stops.
   */
  flush(drive: Drive, work?: (tx: EventTransaction) => Promise<NewEvent[]>): Promise<void> {
    const flushed = drive.flushing.then(() => this.flushNow(drive, work));
    drive.flushing = flushed.catch(() => undefined);
    return flushed;
  }

  /**
   * A requested pause takes effect here, between steps or agent iterations, where nothing of the run
   * is running: the run reports `paused` only now, and no step event of it can follow until `resumed`.
   */
  async pauseIfRequested(drive: Drive): Promise<void> {
    const { pauseRequestedBy, status } = drive.state;
    if (pauseRequestedBy === null || isTerminal(status) || status === 'paused' || drive.fenced) return;
    this.push(drive, runEvent('paused', { by: pauseRequestedBy }));
    await this.flush(drive);
  }

  /**
   * Takes in the control events that arrived (pause, abort, steer) before the next step starts: with
   * something pending, the append's conflict merges them; with nothing pending there is no append to
   * conflict, so they are read directly.
   */
  async catchUp(drive: Drive): Promise<void> {
    if (drive.pending.length > 0) await this.flush(drive);
    else await this.reconcile(drive);
  }

  private async flushNow(drive: Drive, work?: (tx: EventTransaction) => Promise<NewEvent[]>): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      // What this append takes; the drive may push more meanwhile (a makeDurable beside a running step).
      let taken = 0;
      // The run ends with what is journaled: the lease goes in the same commit, one statement fewer.
      let releasesLease = false;
      const entryOf = (produced: NewEvent[]): JournalEntry => {
        taken = drive.pending.length;
        releasesLease = isTerminal(produced.reduce((state, e) => applyLocal(state, e, this.now()), drive.state).status);
        return { runId: drive.runId, stream: drive.stream, expectedVersion: drive.committed.version, events: [...drive.pending, ...produced], releasesLease };
      };
      const askedAt = performance.now();
      try {
        const appended = work ? await this.journal.writeWith(entryOf, work) : drive.pending.length > 0 ? await this.journal.write(entryOf([])) : [];
        if (appended.length > 0) {
          drive.holdsLease = !releasesLease;
          drive.leaseSeenAt = askedAt;
        }
        drive.committed = foldRun(appended, drive.committed);
        drive.journal.push(...appended);
        drive.pending = drive.pending.slice(taken);
        this.restate(drive);
        if (drive.committed.exists) drive.markDurable();
        return;
      } catch (error) {
        if (error instanceof LeaseLost) throw new DriveStopped(error.message);
        if (isCommitOutcomeUnknown(error)) drive.unsureWrite = true;
        if (!(error instanceof VersionConflictError)) throw error;
      }
      if (!(await this.reconcile(drive))) throw new DriveStopped('run advanced elsewhere or ended');
    }
    throw new Error(`run ${drive.runId}: too many concurrent changes`);
  }

  /** The drive's state: what is journaled, plus what is pending. */
  private restate(drive: Drive): void {
    drive.state = drive.pending.reduce((state, e) => applyLocal(state, e, this.now()), drive.committed);
  }

  /** Merges events others appended since our last write; false when this drive must stop. */
  async reconcile(drive: Drive): Promise<boolean> {
    const newer = await this.store.readStream(drive.stream, drive.committed.version);
    if (newer.some((e) => !CONTROL_EVENT_TYPES.includes(e.type as RunEventType))) {
      drive.fenced = true;
      return false;
    }
    drive.committed = foldRun(newer, drive.committed);
    drive.journal.push(...newer);
    if (isTerminal(drive.committed.status)) {
      drive.pending = [];
      drive.state = drive.committed;
      return false;
    }
    this.restate(drive);
    return true;
  }
}
