// The durable executor's scheduler: starts and resumes drives of runs (the step runner runs their
// steps, claims.ts picks up runs nobody drives), holds and gives up their leases, and routes control
// events to the drives they concern. Optimistic concurrency on the run stream fences two workers.
import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { LogFollower } from '../../eventstore/follow.js';
import { selectGlobalHead } from '../../eventstore/sql.js';
import type { EventStore } from '../../eventstore/store.js';
import type { RecordedEvent } from '../../eventstore/types.js';
import type { Clock } from '../../kernel/clock.js';
import { withCausation } from '../../kernel/causation.js';
import { newId } from '../../kernel/ids.js';
import type { Logger } from '../../kernel/logger.js';
import { asRunEvent, isControlEvent, runIdOf, runStream } from '../events.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import type { AgentDeps } from './agentSetup.js';
import { DriveStopped, newDrive, type Drive } from './drive.js';
import { DriveWriter } from './driveWriter.js';
import { executorCausation } from './runCausation.js';
import { notRecordedError, recordingOf, type RunRecording } from './recording.js';
import { RunClaims } from './claims.js';
import { acquireLease, keepLease, releaseLease } from './leases.js';
import { RunGroupCommit } from './runGroupCommit.js';
import { foldRun, initialRunState, isTerminal, WAITING_STATUSES, type RunState } from '../state.js';
import { StepRunner } from './stepRunner.js';
import { endRunSpan, inRunSpan, openRunSpan, withTraceContext } from './runTracing.js';
import { admissionOf, dequeueWaiting } from '../concurrency/admission.js';
import { runStarted, type StartedRun, type StartRun } from './runStart.js';
import type { StepDeps } from './steps/types.js';
import type { DataKeys } from '../../privacy/dataKeys.js';
import { openRunEvents, runSealerOf } from '../personal.js';

export interface ExecutorOptions {
  store: EventStore;
  follower: LogFollower;
  workflows: WorkflowRegistry;
  steps: StepDeps;
  clock: Clock;
  logger: Logger;
  leaseMs: number;
  claimIntervalMs: number;
  /** Runs one process drives at once; claims stop beyond it. */
  maxActiveRuns?: number;
  /** AgentModels and artifacts for Agent steps. */
  agents?: AgentDeps;
  /** Seals and opens the spec.personal_data of runs (docs/privacy.md); without it they are journaled in clear. */
  dataKeys?: DataKeys;
}

/** Two commits in flight: one is in PostgreSQL while the next fills up. */
const GROUP_COMMIT_LIMITS = { maxBatch: 100, maxInFlight: 2 };

/** How long a run whose workflow version is not loaded here stays out of claims before it is tried again. */
const UNRUNNABLE_PARK_MS = 60_000;

export class RunExecutor {
  /** Identifies this process in run leases. */
  readonly owner = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly active = new Map<string, Drive>();
  private readonly finished = new Map<string, Promise<RunState>>();
  /** Runs whose resume is between its first check and its drive starting (a lease is re-entrant per owner). */
  private readonly resuming = new Set<string>();
  private subscriptions: Subscription[] = [];
  private stopped = false;

  private readonly writer: DriveWriter;
  private readonly runner: StepRunner;
  private readonly claims: RunClaims;

  constructor(private readonly options: ExecutorOptions) {
    const { store, clock, leaseMs } = options;
    const here = { ...options, pool: store.pool, owner: this.owner, resumeRun: (id: string) => this.resume(id) };
    this.writer = new DriveWriter(store, new RunGroupCommit(store, this.owner, leaseMs, GROUP_COMMIT_LIMITS), clock);
    this.runner = new StepRunner(this.writer, here);
    this.claims = new RunClaims(here, {
      activeRunIds: () => [...this.active.keys()],
      resume: (runId, leasedAt) => this.resume(runId, leasedAt),
      admitQueued: (room) => dequeueWaiting(store, options.workflows, room),
    });
  }

  /** Listens for control events (resumes and decisions of runs not driven here), heartbeats leases, claims orphaned runs. */
  async start(): Promise<void> {
    const { follower, store, logger } = this.options;
    const onEvent = (event: RecordedEvent) => this.onRunEvent(event);
    const head = await selectGlobalHead(store.pool);
    this.subscriptions = [
      follower.localCommits$.subscribe(onEvent),
      follower
        .subscribeToAll(head, { streamTypes: ['run'] }, { localCommitsTaken: true })
        .subscribe({ next: onEvent, error: (error: unknown) => logger.error({ err: error }, 'run feed failed') }),
    ];
    this.claims.start();
  }

  /** Stops claiming; runs in flight finish their current step and keep their journal. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.subscriptions.forEach((s) => s.unsubscribe());
    this.claims.stop();
    await Promise.allSettled([...this.finished.values()]);
  }

  activeRunCount(): number {
    return this.active.size;
  }

  /**
   * Starts a run. With `commitFirst` the run is durable before this returns (a 202 answer), or this
   * throws (UnavailableError when the database did not record it); otherwise run_started goes out
   * with the first step's events, and `recording` says when (or whether) it did.
   */
  async startRun(request: StartRun, commitFirst: boolean): Promise<StartedRun> {
    const runId = request.runId ?? newId();
    const { workflow } = request;
    let settleRecording: (recording: RunRecording) => void = () => undefined;
    const recording = new Promise<RunRecording>((resolve) => {
      settleRecording = resolve;
    });
    const drive: Drive = newDrive({ runId, workflow, recorded: [], committed: initialRunState, markDurable: () => settleRecording(recordingOf(drive)) });
    // No await (and no query) for a workflow without spec.personal_data: the start stays as it was.
    if ((workflow.personalData ?? []).length > 0)
      drive.sealer = await runSealerOf(this.options.dataKeys, workflow, runId, request.principal, 'new-with-first-append');
    openRunSpan(drive, false);
    this.writer.push(drive, withTraceContext(runStarted(runId, request), drive.span));
    this.active.set(runId, drive);
    // Under spec.concurrency the start is admitted (or queued, or refused) in the commit of run_started.
    if (commitFirst || workflow.concurrency) {
      try {
        await this.writer.flush(drive, workflow.concurrency ? admissionOf(drive.state, workflow.concurrency, true) : undefined);
      } catch (error) {
        this.active.delete(runId);
        endRunSpan(drive);
        const recorded = recordingOf(drive);
        throw isConnectionLoss(error) && recorded.kind !== 'journaled' ? notRecordedError(runId, recorded, error) : error;
      }
    }
    // As journaled when this returns: with `commitFirst`, the run as a 202 describes it, no read needed.
    const journaled = drive.committed;
    const finished = this.launch(drive);
    // A drive that ends before the run was ever journaled (the database went away) settles it too.
    void finished.then(() => settleRecording(recordingOf(drive)));
    return { runId, finished, recording, journaled };
  }

  /** The drive of a run this process executes, if any (for waiting on it). */
  whenFinished(runId: string): Promise<RunState> | undefined {
    return this.finished.get(runId);
  }

  /**
   * Continues a run from its journal if nobody else holds it (after a restart, a resume, a decision);
   * `leasedAt`: a claim just leased it here (performance.now() before the claim), so no lease is asked for again.
   */
  async resume(runId: string, leasedAt?: number): Promise<void> {
    if (this.stopped) return;
    const running = this.active.get(runId);
    if (running) {
      running.interrupted = true;
      return;
    }
    // A resume route and the control event it appended both resume: only one may start a drive.
    if (this.resuming.has(runId)) return;
    this.resuming.add(runId);
    try {
      await this.resumeDrive(runId, leasedAt);
    } finally {
      this.resuming.delete(runId);
    }
  }

  private async resumeDrive(runId: string, leasedAt?: number): Promise<void> {
    const { store, leaseMs, logger } = this.options;
    const askedAt = leasedAt ?? performance.now();
    if (leasedAt === undefined && !(await acquireLease(store.pool, runId, this.owner, leaseMs))) return;
    let recorded = (await store.readWholeStream(runStream(runId))).map((e) => asRunEvent(e));
    let committed = foldRun(recorded);
    const isRunnable = committed.exists && !isTerminal(committed.status) && !WAITING_STATUSES.includes(committed.status);
    const workflow = isRunnable ? this.options.workflows.find(committed.workflow, committed.schemaVersion) : undefined;
    if (isRunnable && !workflow) {
      // Parked, not released: claims would pick this oldest run again at every tick, ahead of runs
      // that can go on. Another worker that has the version loaded (a rolling deploy) gets it later.
      logger.error({ runId, workflow: committed.workflow, version: committed.schemaVersion }, 'run cannot resume: its workflow version is not loaded here');
      await keepLease(store.pool, runId, this.owner, UNRUNNABLE_PARK_MS);
      return;
    }
    if (!workflow) {
      await releaseLease(store.pool, runId, this.owner);
      return;
    }
    const sealer =
      (workflow.personalData ?? []).length > 0 ? await runSealerOf(this.options.dataKeys, workflow, runId, committed.principal, 'resumed') : undefined;
    if (sealer) {
      // The drive works on clear values: what the journal holds sealed is opened (null once erased).
      recorded = await openRunEvents(this.options.dataKeys!, recorded);
      committed = foldRun(recorded);
    }
    const drive = newDrive({ runId, workflow, recorded, committed, leaseSeenAt: askedAt });
    drive.sealer = sealer;
    openRunSpan(drive, true);
    this.active.set(runId, drive);
    void this.launch(drive);
  }

  /** Runs the drive's steps, tracked until it ends; answers the run as journaled then. */
  private launch(drive: Drive): Promise<RunState> {
    // What the engine appends for the run is the run's principal's doing, through the executor.
    const run = withCausation(executorCausation(drive.state), () => inRunSpan(drive, () => this.drive(drive)));
    this.finished.set(drive.runId, run);
    void run.finally(() => {
      if (this.finished.get(drive.runId) === run) this.finished.delete(drive.runId);
    });
    return run;
  }

  private async drive(drive: Drive): Promise<RunState> {
    const control = this.followControl(drive);
    try {
      await this.runner.run(drive);
    } catch (error) {
      if (isConnectionLoss(error)) this.leaveForResume(drive, error);
      else if (!(error instanceof DriveStopped)) await this.runner.failOnEngineError(drive, error);
    } finally {
      control.unsubscribe();
      this.active.delete(drive.runId);
      if (drive.holdsLease) await releaseLease(this.options.store.pool, drive.runId, this.owner).catch(() => undefined);
      this.claims.driveEnded(drive.workflow.concurrency !== null);
    }
    // What the journal holds, not what this drive had in hand: an answer never reports an outcome
    // that was not recorded (a failure the drive could not journal, steps a lost commit dropped).
    return drive.committed;
  }

  /**
   * The drive hears its run's control events (from any process) on the run's own stream as soon as
   * they are committed: a long transaction elsewhere on the cluster, which holds the global feed
   * back, does not keep an abort from cancelling the model call in flight. Live only: what the
   * journal held when the drive started is in its state already.
   */
  private followControl(drive: Drive): Subscription {
    return this.options.follower.subscribeToStream(drive.stream, drive.committed.version, { liveOnly: true }).subscribe((event) => {
      if (isControlEvent(event.type)) interrupt(drive, event.type);
    });
  }

  /**
   * The database went away under the drive: nothing failed, so nothing is journaled as failed. A run
   * that may be in the journal is resumed by the claim loop once the database is back.
   */
  private leaveForResume(drive: Drive, error: unknown): void {
    this.options.logger.warn({ err: error, runId: drive.runId }, 'the database connection was lost under a run; it resumes once the database is back');
    if (drive.committed.exists || drive.unsureWrite) this.claims.resumeWhenBack(drive.runId);
  }

  /**
   * Journals a run still waiting for its first append (its first step is taking long, and a sync
   * trigger timed out and answers 202, which must name a run that exists).
   */
  async makeDurable(runId: string): Promise<void> {
    const drive = this.active.get(runId);
    if (!drive || drive.committed.exists) return;
    await this.writer.flush(drive).catch((error: unknown) => {
      // The run ended or moved on meanwhile, or the database went away (the drive meets that at its
      // next write): `recording` says what the journal holds.
      if (!(error instanceof DriveStopped) && !isConnectionLoss(error)) throw error;
    });
  }

  /**
   * Control events from the gated global feed and this process's commits: a run not driven here is
   * resumed by a resume or a decision. (A drive follows its own stream; this is its fallback for
   * events committed before it subscribed.)
   */
  private onRunEvent(event: RecordedEvent): void {
    if (event.streamType !== 'run' || !isControlEvent(event.type)) return;
    const runId = runIdOf(event.streamId);
    const drive = this.active.get(runId);
    if (drive) interrupt(drive, event.type);
    else if (event.type === 'resumed' || event.type === 'approval_decided' || event.type === 'child_finished')
      void this.resume(runId).catch((error: unknown) => this.options.logger.warn({ err: error, runId }, 'resume failed'));
  }
}

/** A control event reached the drive: it is taken in before the next step (a hold for a wake ends); an abort also cancels the model call in flight. */
function interrupt(drive: Drive, type: string): void {
  drive.interrupted = true;
  drive.nudge();
  if (type === 'run_aborted') drive.aborted.abort();
}
