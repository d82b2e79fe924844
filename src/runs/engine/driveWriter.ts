// Writing a drive's pending events to the run's journal, and merging what others appended meanwhile.
import { isCommitOutcomeUnknown } from '../../db/connectionLoss.js';
import type { EventStore } from '../../eventstore/store.js';
import type { EventTransaction } from '../../eventstore/transaction.js';
import type { Clock } from '../../kernel/clock.js';
import { withCause } from '../../kernel/causation.js';
import { VersionConflictError } from '../../kernel/errors.js';
import { asRunEvent, isControlEvent, runEvent, type RecordedRunEvent, type RunEvent } from '../events.js';
import { foldRun, isTerminal } from '../state.js';
import { sealRunEvent } from '../personal.js';
import { applyLocal, DriveStopped, type Drive } from './drive.js';
import { tellParent } from './parentNotice.js';
import { LeaseLost, type RunAppend, type RunGroupCommit } from './runGroupCommit.js';
import { countJournaled } from './runMetrics.js';

/** What a step adds inside the transaction of its append (a ModelOp's events, after its record write). */
export type WorkInTransaction = (tx: EventTransaction) => Promise<RunEvent[]>;

/** Pending events in, journaled events out: what every step kind uses to record its progress. */
export class DriveWriter {
  constructor(
    private readonly store: EventStore,
    private readonly commits: RunGroupCommit,
    private readonly clock: Clock,
  ) {}

  now(): string {
    return this.clock.now().toISOString();
  }

  /** The event's cause is taken now: its append may share a commit with other runs' events. */
  push(drive: Drive, event: RunEvent): void {
    drive.pending.push({ ...event, metadata: withCause(event.metadata) });
    drive.state = applyLocal(drive.state, event, this.now());
  }

  /**
   * Appends what is pending (plus what `work` produces inside the same transaction) at the journaled
   * version. A lost race is merged when only control events came in between; a foreign step event
   * means another executor holds the run, and this one stops.
   */
  flush(drive: Drive, work?: WorkInTransaction): Promise<void> {
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

  private async flushNow(drive: Drive, work?: WorkInTransaction): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      // What this append takes; the drive may push more meanwhile (a makeDurable beside a running step).
      let taken = 0;
      // The run ends with what is journaled: the lease goes in the same commit, one statement fewer.
      let releasesLease = false;
      // What is appended in clear (the drive's own copy), when spec.personal_data seals what is stored.
      let plain: RunEvent[] = [];
      const appendOf = (produced: RunEvent[]): RunAppend => {
        taken = drive.pending.length;
        releasesLease = isTerminal(produced.reduce((state, e) => applyLocal(state, e, this.now()), drive.state).status);
        plain = [...drive.pending, ...produced];
        const sealer = drive.sealer;
        const events = sealer ? plain.map((event) => sealRunEvent(sealer, event)) : plain;
        const newKey = sealer?.unstoredKey;
        return { runId: drive.runId, stream: drive.stream, expectedVersion: drive.committed.version, events, releasesLease, newKey };
      };
      const askedAt = performance.now();
      try {
        const stored = await this.commit(drive, appendOf, work);
        const appended = drive.sealer ? stored.map((event, index) => ({ ...event, data: plain[index]?.data ?? event.data }) as RecordedRunEvent) : stored;
        if (appended.length > 0) {
          drive.holdsLease = !releasesLease;
          drive.leaseSeenAt = askedAt;
          if (drive.sealer) drive.sealer.unstoredKey = undefined;
        }
        this.takeIn(drive, appended);
        countJournaled(drive.committed, appended);
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

  private async commit(drive: Drive, appendOf: (produced: RunEvent[]) => RunAppend, given?: WorkInTransaction): Promise<RecordedRunEvent[]> {
    const endsChild =
      drive.state.parentRunId !== null && !isTerminal(drive.committed.status) && (given || (drive.pending.length > 0 && isTerminal(drive.state.status)));
    const work = endsChild ? this.withParentNotice(drive, given) : given;
    if (work) return (await this.commits.commitWith(appendOf, work)).map((e) => asRunEvent(e));
    if (drive.pending.length === 0) return [];
    return (await this.commits.commit(appendOf([]))).map((e) => asRunEvent(e));
  }

  /** A child run's end commits with its child_finished on the parent's stream (in a transaction of its own). */
  private withParentNotice(drive: Drive, work?: WorkInTransaction): WorkInTransaction {
    return async (tx) => {
      const produced = work ? await work(tx) : [];
      const end = produced.reduce((state, e) => applyLocal(state, e, this.now()), drive.state);
      if (isTerminal(end.status)) await tellParent(tx, end);
      return produced;
    };
  }

  /** Events now in the journal: the drive's committed state and its copy of the journal. */
  private takeIn(drive: Drive, events: RecordedRunEvent[]): void {
    drive.committed = foldRun(events, drive.committed);
    drive.recorded.push(...events);
  }

  /** The drive's state: what is journaled, plus what is pending. */
  private restate(drive: Drive): void {
    drive.state = drive.pending.reduce((state, e) => applyLocal(state, e, this.now()), drive.committed);
  }

  /** Merges events others appended since our last write; false when this drive must stop. */
  async reconcile(drive: Drive): Promise<boolean> {
    const newer = (await this.store.readStream(drive.stream, drive.committed.version)).map((e) => asRunEvent(e));
    if (newer.some((e) => !isControlEvent(e.type))) {
      drive.fenced = true;
      return false;
    }
    this.takeIn(drive, newer);
    if (isTerminal(drive.committed.status)) {
      drive.pending = [];
      drive.state = drive.committed;
      return false;
    }
    this.restate(drive);
    return true;
  }
}
