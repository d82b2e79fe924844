// The step runner: drives a run step after step, journaling each outcome on the run stream before
// moving on. Control events (pause, steer, abort) that came in are merged between steps.
import type { DataKeys } from '../../privacy/dataKeys.js';
import type { Pool } from '../../db/pool.js';
import type { Clock } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/logger.js';
import { runEvent } from '../events.js';
import { endsPurely, SLOW_KINDS, type StepDefinition } from '../../workflows/definition.js';
import type { AgentDeps } from './agentSetup.js';
import { runAgentStep } from './agentStep.js';
import { runWorkflowStep, type ChildRunDeps } from './childStep.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { definitionMismatch, MISMATCH_DETAILS } from './definitionCheck.js';
import { DriveStopped, type Drive } from './drive.js';
import type { DriveWriter } from './driveWriter.js';
import { keepLease } from './leases.js';
import { finalOutcome, stepEvents } from './outcome.js';
import { isTerminal, TIMED_STATUSES, WAITING_STATUSES } from '../state.js';
import { callStep, stepInput } from './stepCall.js';
import { humanApproval, humanOutcome } from './steps/human.js';
import { NO_CHANGES, type StepDeps } from './steps/types.js';
import { waitFiresAt } from './steps/wait.js';
import { attemptEvents, attemptOf, untilWake } from './timed.js';
import { admissionOf } from '../concurrency/admission.js';
import { inStepSpan } from './runTracing.js';

export interface StepRunnerOptions {
  pool: Pool;
  /** This process, as run leases name it. */
  owner: string;
  leaseMs: number;
  /** How long a wait (a retry, a timer) may be held in this process; longer ones release the run to claims. */
  claimIntervalMs: number;
  steps: StepDeps;
  /** AgentModels and artifacts for Agent steps. */
  agents?: AgentDeps | undefined;
  /** Workflow steps: the workflows they start. */
  workflows: WorkflowRegistry;
  /** Drives a run here (a child a Workflow step just started). */
  resumeRun: (runId: string) => Promise<void>;
  /** Seals children's spec.personal_data (docs/privacy.md). */
  dataKeys?: DataKeys | undefined;
  clock: Clock;
  logger: Logger;
}

export class StepRunner {
  constructor(
    private readonly writer: DriveWriter,
    private readonly options: StepRunnerOptions,
  ) {}

  /** Runs the drive's steps until the run ends, waits, or is taken from this process (DriveStopped). */
  async run(drive: Drive): Promise<void> {
    if (await this.failOnChangedDefinition(drive)) return;
    while (!drive.fenced) {
      if (drive.interrupted) {
        drive.interrupted = false;
        await this.writer.catchUp(drive);
      }
      if (drive.fenced) break;
      await this.writer.pauseIfRequested(drive);
      const { status, nextStep } = drive.state;
      if (isTerminal(status) || WAITING_STATUSES.includes(status)) break;
      if (TIMED_STATUSES.includes(status)) {
        const wake = await untilWake(drive, this.options.clock.now(), this.options.claimIntervalMs);
        if (wake === 'far') break;
        // Held: control events may have come in, and the wake may be due now; the loop looks again.
        if (wake === 'held') continue;
      }
      if (nextStep === null) {
        await this.finish(drive);
        break;
      }
      if (!(await this.holdsSlot(drive))) break;
      await this.confirmLease(drive);
      const step = drive.workflow.steps.find((s) => s.id === nextStep);
      if (!step) {
        this.writer.push(
          drive,
          runEvent('run_failed', { error: { message: `step ${nextStep} is not in the workflow`, details: drive.workflow.name }, status_code: 500 }),
        );
        await this.writer.flush(drive);
        break;
      }
      // A run span is open only while tracing is on: off, the step runs with nothing around it.
      if (drive.span) await inStepSpan(drive, step, async () => (status === 'waiting_timer' ? this.fireTimer(drive, step) : this.runStep(drive, step)));
      else if (status === 'waiting_timer') this.fireTimer(drive, step);
      else await this.runStep(drive, step);
    }
    if (drive.pending.length > 0 && !drive.fenced) await this.writer.flush(drive);
  }

  /**
   * A resumed run goes on with the definition of its version as loaded now: every step its journal
   * names must still be there with the same kind, or the run fails before any step runs again.
   */
  private async failOnChangedDefinition(drive: Drive): Promise<boolean> {
    const mismatch = definitionMismatch(drive.workflow, drive.recorded);
    if (mismatch === null) return false;
    this.options.logger.error({ runId: drive.runId, workflow: drive.workflow.name, version: drive.workflow.version }, mismatch);
    this.writer.push(drive, runEvent('run_failed', { error: { message: mismatch, details: MISMATCH_DETAILS }, status_code: 500 }));
    await this.writer.flush(drive);
    return true;
  }

  /**
   * Under spec.concurrency a run executes steps only while it holds a slot: one it does not hold yet
   * (a start, a run back from a person, a timer or a retry) is admitted in a commit of its own, or
   * queued; a queued run's drive ends here, and a dequeue pass brings it back on any worker.
   */
  private async holdsSlot(drive: Drive): Promise<boolean> {
    const policy = drive.workflow.concurrency;
    if (!policy || drive.state.slot?.state === 'held') return true;
    if (drive.state.slot?.state === 'waiting') return false;
    await this.writer.flush(drive, admissionOf(drive.state, policy, !drive.committed.exists));
    return drive.state.slot?.state === 'held';
  }

  private children(): ChildRunDeps {
    const { workflows, steps, logger, resumeRun, dataKeys } = this.options;
    return { workflows, models: steps.models, logger, resume: resumeRun, dataKeys };
  }

  /** A stall (GC, a blocked event loop) may have outlived the lease: never start a step on a run another process may have taken over. */
  private async confirmLease(drive: Drive): Promise<void> {
    const { pool, owner, leaseMs } = this.options;
    if (!drive.holdsLease || performance.now() - drive.leaseSeenAt <= leaseMs / 2) return;
    const askedAt = performance.now();
    if (!(await keepLease(pool, drive.runId, owner, leaseMs))) throw new DriveStopped('lease lapsed');
    drive.leaseSeenAt = askedAt;
  }

  private async runStep(drive: Drive, step: StepDefinition): Promise<void> {
    if (step.kind === 'HumanInTheLoop') return this.runHumanStep(drive, step);
    if (step.kind === 'Agent') return runAgentStep(drive, step, this.writer, this.options);
    if (step.kind === 'Wait') return this.startTimer(drive, step);
    if (step.kind === 'Workflow') return runWorkflowStep(drive, step, this.writer, this.children());
    const started = performance.now();
    const attempt = attemptOf(drive, step.id);
    this.writer.push(drive, runEvent('step_started', {}, step));
    // Before anything leaves the process, the journal says the step began (it may run twice after a crash).
    if (SLOW_KINDS.includes(step.kind)) await this.writer.flush(drive);
    if (drive.fenced || isTerminal(drive.state.status)) return;
    const input = { ...stepInput(drive, step, this.writer.now()), attempt };
    await callStep(drive, this.writer, this.options.steps, input, (outcome) =>
      attemptEvents({ workflow: drive.workflow, step, outcome, durationMs: Math.round(performance.now() - started), attempt, now: this.options.clock.now() }),
    );
    // A failed attempt waits for the next one: journaled first, so any worker can take it up.
    if (drive.state.wake !== null) return this.writer.flush(drive);
    // A runner may have touched the outside world: journal it before moving on, unless all that is
    // left are Router and Response steps (nothing leaves the process): then it goes out with the
    // run's end, one commit fewer. A crash before that commit runs the step again, as a crash during
    // it would. (A ModelOp's outcome is journaled already, with its record write.)
    if (step.kind === 'Router' || step.kind === 'Response' || step.kind === 'ModelOp') return;
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
    this.writer.push(
      drive,
      runEvent('approval_requested', { approval: humanApproval(step, drive.workflow.name, drive.state, this.options.clock.now()) }, step),
    );
    await this.writer.flush(drive);
  }

  /** A Wait step: its timer's time journaled (timer_started), or the step's error for a bad date. */
  private async startTimer(drive: Drive, step: StepDefinition): Promise<void> {
    this.writer.push(drive, runEvent('step_started', {}, step));
    const timer = waitFiresAt(step, drive.state.context, this.options.clock.now());
    if ('failed' in timer) for (const event of stepEvents(drive.workflow, step, timer.failed, 0)) this.writer.push(drive, event);
    else this.writer.push(drive, runEvent('timer_started', { fires_at: timer.firesAt }, step));
    await this.writer.flush(drive);
  }

  /** The Wait step's timer is due: it fires and the step completes (journaled with what follows). */
  private fireTimer(drive: Drive, step: StepDefinition): void {
    const firesAt = drive.state.wake?.at ?? this.writer.now();
    this.writer.push(drive, runEvent('timer_fired', { fires_at: firesAt }, step));
    for (const event of stepEvents(drive.workflow, step, { signal: 'default', changes: NO_CHANGES }, 0)) this.writer.push(drive, event);
  }

  private async finish(drive: Drive): Promise<void> {
    this.writer.push(drive, finalOutcome(drive.workflow, drive.state.context, this.options.steps.models));
    await this.writer.flush(drive);
  }

  /** Records that the run failed on an error of the engine (not of a step), if it can still be recorded. */
  async failOnEngineError(drive: Drive, error: unknown): Promise<void> {
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
    await this.writer
      .flush(drive)
      .catch((flushError: unknown) => this.options.logger.error({ err: flushError, runId: drive.runId }, 'could not journal the failure'));
  }
}
