// The durable executor: runs a workflow's steps, journaling each outcome on the run stream before
// moving on. Optimistic concurrency on the stream fences two workers; control events (pause,
// steer, abort) written by any worker are merged in between steps.
import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { LogFollower } from '../../eventstore/follow.js';
import { selectGlobalHead } from '../../eventstore/sql.js';
import type { EventStore } from '../../eventstore/store.js';
import type { RecordedEvent } from '../../eventstore/types.js';
import type { Clock } from '../../kernel/clock.js';
import { newId } from '../../kernel/ids.js';
import type { JsonObject } from '../../kernel/json.js';
import type { Logger } from '../../kernel/logger.js';
import { CONTROL_EVENT_TYPES, runEvent, runStream, type RunEventType } from '../events.js';
import { endsPurely, SLOW_KINDS, type StepDefinition, type WorkflowDefinition } from '../../workflows/definition.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import type { AgentDeps } from './agent.js';
import { runAgentStep } from './agentStep.js';
import { applyLocal, DriveStopped, DriveWriter, timesRun, type Drive } from './drive.js';
import { RunJournal } from './journal.js';
import { notRecordedError, recordingOf, type RunRecording } from './recording.js';
import { acquireLease, claimRuns, keepLease, releaseLease, renewLeases } from './leases.js';
import { finalOutcome, stepEvents } from './outcome.js';
import { foldRun, initialRunState, isTerminal, type RunPrincipal, type RunState } from '../state.js';
import { humanApproval, humanOutcome } from './steps/human.js';
import { STEP_EXECUTORS } from './steps/index.js';
import type { StepDeps, StepOutcome } from './steps/types.js';

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
}

export interface StartRun {
  workflow: WorkflowDefinition;
  input: JsonObject;
  principal: RunPrincipal | null;
  trigger: string;
}

const WAITING: readonly RunState['status'][] = ['paused', 'waiting_human', 'waiting_approval'];

/** Two commits in flight: one is in PostgreSQL while the next fills up. */
const JOURNAL_LIMITS = { maxBatch: 100, maxInFlight: 2 };

/** How long a run whose workflow version is not loaded here stays out of claims before it is tried again. */
const UNRUNNABLE_PARK_MS = 60_000;

export class RunExecutor {
  /** Identifies this process in run leases. */
  readonly owner = `${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly active = new Map<string, Drive>();
  private readonly finished = new Map<string, Promise<RunState>>();
  /** Runs whose resume is between its first check and its drive starting (a lease is re-entrant per owner). */
  private readonly resuming = new Set<string>();
  /** Runs whose drive here ended when the database went away, to resume once it is back. */
  private readonly cutOff = new Set<string>();
  private subscriptions: Subscription[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private claimTimer: NodeJS.Timeout | undefined;
  private claiming = false;
  private stopped = false;

  private readonly writer: DriveWriter;

  constructor(private readonly options: ExecutorOptions) {
    this.writer = new DriveWriter(options.store, new RunJournal(options.store, this.owner, options.leaseMs, JOURNAL_LIMITS), options.clock);
  }

  /** Listens for control events of the runs it drives, heartbeats leases, claims orphaned runs. */
  async start(): Promise<void> {
    const { follower, store, leaseMs, claimIntervalMs } = this.options;
    const onEvent = (event: RecordedEvent) => this.onRunEvent(event);
    const head = await selectGlobalHead(store.pool);
    this.subscriptions = [
      follower.localCommits$.subscribe(onEvent),
      follower.subscribeToAll(head, ['run']).subscribe({ next: onEvent, error: (error: unknown) => this.options.logger.error({ err: error }, 'run feed failed') }),
    ];
    this.heartbeat = setInterval(() => {
      renewLeases(store.pool, [...this.active.keys()], this.owner, leaseMs).catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'renewing run leases failed'),
      );
    }, Math.max(100, Math.floor(leaseMs / 3)));
    this.heartbeat.unref();
    this.claimTimer = setInterval(() => void this.claim(), claimIntervalMs);
    this.claimTimer.unref();
    void this.claim();
  }

  /** Stops claiming; runs in flight finish their current step and keep their journal. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.subscriptions.forEach((s) => s.unsubscribe());
    clearInterval(this.heartbeat);
    clearInterval(this.claimTimer);
    await Promise.allSettled([...this.finished.values()]);
  }

  activeRunCount(): number {
    return this.active.size;
  }

  /**
   * Starts a run. With `commitFirst` the run is durable before this returns (a 202 answer), or this
   * throws (UnavailableError when the database did not record it); otherwise run_started goes out
   * with the first step's journal entry, and `recording` says when (or whether) it did.
   * `finished` resolves with the run as journaled when its drive here ends.
   */
  async startRun(
    request: StartRun,
    commitFirst: boolean,
  ): Promise<{ runId: string; finished: Promise<RunState>; recording: Promise<RunRecording>; journaled: RunState }> {
    const runId = newId();
    const { workflow } = request;
    const started = runEvent('run_started', {
      run_id: runId,
      workflow: workflow.name,
      schema_version: workflow.version,
      input: request.input,
      principal: request.principal,
      trigger: request.trigger,
      first_step: workflow.steps[0]?.id ?? null,
    });
    let settleRecording: (recording: RunRecording) => void = () => undefined;
    const recording = new Promise<RunRecording>((resolve) => {
      settleRecording = resolve;
    });
    const drive: Drive = {
      runId,
      stream: runStream(runId),
      workflow,
      committed: initialRunState,
      journal: [],
      state: applyLocal(initialRunState, started, this.writer.now()),
      pending: [started],
      holdsLease: false,
      leaseSeenAt: 0,
      interrupted: false,
      fenced: false,
      unsureWrite: false,
      markDurable: () => settleRecording(recordingOf(drive)),
      flushing: Promise.resolve(),
      aborted: new AbortController(),
    };
    this.active.set(runId, drive);
    if (commitFirst) {
      try {
        await this.writer.flush(drive);
      } catch (error) {
        this.active.delete(runId);
        const recorded = recordingOf(drive);
        throw isConnectionLoss(error) && recorded.kind !== 'journaled' ? notRecordedError(runId, recorded, error) : error;
      }
    }
    // As journaled when this returns: with `commitFirst`, the run as a 202 describes it, no read needed.
    const journaled = drive.committed;
    const finished = this.track(runId, this.drive(drive));
    // A drive that ends before the run was ever journaled (the database went away) settles it too.
    void finished.then(() => settleRecording(recordingOf(drive)));
    return { runId, finished, recording, journaled };
  }

  /** The drive of a run this process executes, if any (for waiting on it). */
  whenFinished(runId: string): Promise<RunState> | undefined {
    return this.finished.get(runId);
  }

  /** Continues a run from its journal if nobody else holds it (after a restart, a resume, a decision). */
  async resume(runId: string): Promise<void> {
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
      await this.resumeDrive(runId);
    } finally {
      this.resuming.delete(runId);
    }
  }

  private async resumeDrive(runId: string): Promise<void> {
    const { store, leaseMs } = this.options;
    const askedAt = performance.now();
    if (!(await acquireLease(store.pool, runId, this.owner, leaseMs))) return;
    const journal = await store.readWholeStream(runStream(runId));
    const committed = foldRun(journal);
    const workflow = committed.exists ? this.options.workflows.find(committed.workflow, committed.schemaVersion) : undefined;
    if (committed.exists && !isTerminal(committed.status) && !WAITING.includes(committed.status) && !workflow) {
      // Parked, not released: claims would pick this oldest run again at every tick, ahead of runs
      // that can go on. Another worker that has the version loaded (a rolling deploy) gets it later.
      this.options.logger.error({ runId, workflow: committed.workflow, version: committed.schemaVersion }, 'run cannot resume: its workflow version is not loaded here');
      await keepLease(store.pool, runId, this.owner, UNRUNNABLE_PARK_MS);
      return;
    }
    if (!committed.exists || isTerminal(committed.status) || WAITING.includes(committed.status) || !workflow) {
      await releaseLease(store.pool, runId, this.owner);
      return;
    }
    const drive: Drive = {
      runId,
      stream: runStream(runId),
      workflow,
      committed,
      journal,
      state: committed,
      pending: [],
      holdsLease: true,
      leaseSeenAt: askedAt,
      interrupted: false,
      fenced: false,
      unsureWrite: false,
      markDurable: () => undefined,
      flushing: Promise.resolve(),
      aborted: new AbortController(),
    };
    this.active.set(runId, drive);
    void this.track(runId, this.drive(drive));
  }

  private track(runId: string, run: Promise<RunState>): Promise<RunState> {
    this.finished.set(runId, run);
    void run.finally(() => {
      if (this.finished.get(runId) === run) this.finished.delete(runId);
    });
    return run;
  }

  private async drive(drive: Drive): Promise<RunState> {
    try {
      while (!drive.fenced) {
        if (drive.interrupted) {
          drive.interrupted = false;
          await this.writer.catchUp(drive);
        }
        if (drive.fenced) break;
        await this.writer.pauseIfRequested(drive);
        const { status, nextStep } = drive.state;
        if (isTerminal(status) || WAITING.includes(status)) break;
        if (nextStep === null) {
          await this.finish(drive);
          break;
        }
        // A stall (GC, a blocked event loop) may have outlived the lease: never start a step on a run another process may have taken over.
        if (drive.holdsLease && performance.now() - drive.leaseSeenAt > this.options.leaseMs / 2) {
          const askedAt = performance.now();
          if (!(await keepLease(this.options.store.pool, drive.runId, this.owner, this.options.leaseMs))) throw new DriveStopped('lease lapsed');
          drive.leaseSeenAt = askedAt;
        }
        const step = drive.workflow.steps.find((s) => s.id === nextStep);
        if (!step) {
          this.writer.push(drive, runEvent('run_failed', { error: { message: `step ${nextStep} is not in the workflow`, details: drive.workflow.name }, status_code: 500 }));
          await this.writer.flush(drive);
          break;
        }
        await this.runStep(drive, step);
      }
      if (drive.pending.length > 0 && !drive.fenced) await this.writer.flush(drive);
    } catch (error) {
      if (isConnectionLoss(error)) this.leaveForResume(drive, error);
      else if (!(error instanceof DriveStopped)) await this.failOnEngineError(drive, error);
    } finally {
      this.active.delete(drive.runId);
      if (drive.holdsLease) await releaseLease(this.options.store.pool, drive.runId, this.owner).catch(() => undefined);
    }
    // What the journal holds, not what this drive had in hand: an answer never reports an outcome
    // that was not recorded (a failure the drive could not journal, steps a lost commit dropped).
    return drive.committed;
  }

  /**
   * The database went away under the drive: nothing failed, so nothing is journaled as failed. A run
   * that may be in the journal is resumed by the claim loop once the database is back.
   */
  private leaveForResume(drive: Drive, error: unknown): void {
    this.options.logger.warn({ err: error, runId: drive.runId }, 'the database connection was lost under a run; it resumes once the database is back');
    if (drive.committed.exists || drive.unsureWrite) this.cutOff.add(drive.runId);
  }

  private async runStep(drive: Drive, step: StepDefinition): Promise<void> {
    if (step.kind === 'HumanInTheLoop') return this.runHumanStep(drive, step);
    if (step.kind === 'Agent') return runAgentStep(drive, step, this.writer, this.options);
    const started = performance.now();
    this.writer.push(drive, runEvent('step_started', {}, step));
    // Before anything leaves the process, the journal says the step began (it may run twice after a crash).
    if (SLOW_KINDS.includes(step.kind)) await this.writer.flush(drive);
    if (drive.fenced || isTerminal(drive.state.status)) return;
    const execute = STEP_EXECUTORS[step.kind];
    const input = { runId: drive.runId, workflow: drive.workflow, step, context: drive.state.context, principal: drive.state.principal, at: this.writer.now(), visit: timesRun(drive, step.id) };
    const eventsOf = (outcome: StepOutcome) => stepEvents(drive.workflow, step, outcome, Math.round(performance.now() - started));
    if (step.kind === 'ModelOp') {
      // The record write and the step's journal entry commit together, or neither does.
      await this.writer.flush(drive, async (tx) => eventsOf(await execute(input, this.options.steps, tx)));
      return;
    }
    const outcome = await execute(input, this.options.steps);
    for (const event of eventsOf(outcome)) this.writer.push(drive, event);
    // A runner may have touched the outside world: journal it before moving on, unless all that is
    // left are Router and Response steps (nothing leaves the process): then it goes out with the
    // run's end, one commit fewer. A crash before that commit runs the step again, as a crash during it would.
    if (step.kind === 'Router' || step.kind === 'Response') return;
    const next = drive.state.nextStep;
    if (next !== null && !isTerminal(drive.state.status) && !endsPurely(drive.workflow, next)) await this.writer.flush(drive);
  }

  /**
   * First visit: ask for a decision (approval_requested) and wait; the run is released. After a
   * decision (or expiry) the run is resumed here and the step completes with it as its signal.
   */
  private async runHumanStep(drive: Drive, step: StepDefinition): Promise<void> {
    const decided = drive.state.decided;
    if (decided && decided.step_id === step.id) {
      for (const event of stepEvents(drive.workflow, step, humanOutcome(step, decided), 0)) this.writer.push(drive, event);
      await this.writer.flush(drive);
      return;
    }
    this.writer.push(drive, runEvent('step_started', {}, step));
    this.writer.push(drive, runEvent('approval_requested', { approval: humanApproval(step, drive.workflow.name, drive.state, this.options.clock.now()) }, step));
    await this.writer.flush(drive);
  }

  private async finish(drive: Drive): Promise<void> {
    this.writer.push(drive, finalOutcome(drive.workflow, drive.state.context, this.options.steps.models));
    await this.writer.flush(drive);
  }

  private async failOnEngineError(drive: Drive, error: unknown): Promise<void> {
    this.options.logger.error({ err: error, runId: drive.runId }, 'run failed on an engine error');
    if (drive.fenced || isTerminal(drive.committed.status)) return;
    // What failed to journal is dropped, except run_started: the failure is recorded on a run that exists.
    const unjournaledStart = drive.committed.exists ? [] : drive.pending.filter((event) => event.type === 'run_started');
    drive.pending = [];
    drive.state = drive.committed;
    for (const event of unjournaledStart) this.writer.push(drive, event);
    // The error's own text (a database refusal, a connection error) is for the log, never for the client.
    const details = `run ${drive.runId} failed on an internal error; the service log has the cause`;
    this.writer.push(drive, runEvent('run_failed', { error: { message: 'engine failure', details }, status_code: 500 }));
    await this.writer.flush(drive).catch((flushError: unknown) => this.options.logger.error({ err: flushError, runId: drive.runId }, 'could not journal the failure'));
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

  private onRunEvent(event: RecordedEvent): void {
    if (event.streamType !== 'run' || !CONTROL_EVENT_TYPES.includes(event.type as RunEventType)) return;
    const runId = event.streamId.slice('run-'.length);
    const drive = this.active.get(runId);
    if (drive) {
      drive.interrupted = true;
      if (event.type === 'run_aborted') drive.aborted.abort();
    } else if (event.type === 'resumed' || event.type === 'approval_decided') void this.resume(runId).catch((error: unknown) => this.options.logger.warn({ err: error, runId }, 'resume failed'));
  }

  /** Picks up runs nobody drives (their process died, or they were resumed elsewhere). */
  private async claim(): Promise<void> {
    if (this.claiming || this.stopped) return;
    this.claiming = true;
    try {
      // Runs an outage cut off here first: their lease may still be this process's own (its release
      // failed with the database away), which other claimers would wait out.
      for (const runId of [...this.cutOff]) {
        try {
          await this.resume(runId);
        } catch (error) {
          // Still away: this run and the others wait for the next tick. Any other failure is the
          // run's own; claims pick it up again once its lease has run out.
          if (isConnectionLoss(error)) throw error;
          this.options.logger.warn({ err: error, runId }, 'resuming a run cut off by the outage failed');
        }
        this.cutOff.delete(runId);
      }
      const room = (this.options.maxActiveRuns ?? 100) - this.active.size;
      if (room <= 0) return;
      const claimed = await claimRuns(this.options.store.pool, this.owner, this.options.leaseMs, room);
      for (const runId of claimed) await this.resume(runId);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'claiming runs failed');
    } finally {
      this.claiming = false;
    }
  }
}

