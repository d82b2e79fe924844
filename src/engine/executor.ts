// The durable executor: runs a workflow's steps, journaling each outcome on the run stream before
// moving on. Optimistic concurrency on the stream fences two workers; control events (pause,
// steer, abort) written by any worker are merged in between steps.
import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import type { LogFollower } from '../eventstore/follow.js';
import { selectGlobalHead } from '../eventstore/sql.js';
import type { EventStore, EventTransaction } from '../eventstore/store.js';
import type { NewEvent, RecordedEvent } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import { VersionConflictError } from '../kernel/errors.js';
import { newId } from '../kernel/ids.js';
import type { JsonObject } from '../kernel/json.js';
import type { Logger } from '../kernel/logger.js';
import { CONTROL_EVENT_TYPES, runEvent, runStream, type RunEventData, type RunEventType } from '../runs/events.js';
import { endsPurely, SLOW_KINDS, type StepDefinition, type WorkflowDefinition } from '../workflows/definition.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { runAgent, type AgentDeps, type AgentHost } from './agent.js';
import { LeaseLost, RunJournal, type JournalEntry } from './journal.js';
import { acquireLease, claimRuns, keepLease, releaseLease, renewLeases } from './leases.js';
import { finalOutcome, stepEvents } from './outcome.js';
import { evolveRun, foldRun, initialRunState, isTerminal, type RunPrincipal, type RunState } from './state.js';
import { humanOutcome } from './steps/human.js';
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

interface Drive {
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
  /** Resolves once the run is in the journal (its first append committed). */
  markDurable: () => void;
  /** The flush in progress: flushes of one drive run one after the other. */
  flushing: Promise<void>;
  /** Fires when an abort of the run arrives: a model call in flight is cancelled, not waited for. */
  aborted: AbortController;
}

/**
 * How many times the run already finished this step, as a step or as an agent's tool: a runner's
 * idempotency key tells the visits (and tool calls) apart, the same after a resume (it is read from the journal).
 */
function timesRun(drive: Drive, stepId: string): number {
  return [...drive.journal, ...drive.pending].filter((e) => {
    const data = e.data as RunEventData;
    return (FINISHED_STEP.includes(e.type) && data.agent_id === stepId) || (e.type === 'tool_result' && data.payload.tool === stepId);
  }).length;
}

/** Stops a run's drive: its lease was lost or the run was aborted under it. */
class DriveStopped extends Error {}

const WAITING: readonly RunState['status'][] = ['paused', 'waiting_human', 'waiting_approval'];
const FINISHED_STEP: readonly string[] = ['step_completed', 'step_failed'];

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
  private subscriptions: Subscription[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private claimTimer: NodeJS.Timeout | undefined;
  private claiming = false;
  private stopped = false;

  private readonly journal: RunJournal;

  constructor(private readonly options: ExecutorOptions) {
    this.journal = new RunJournal(options.store, this.owner, options.leaseMs, JOURNAL_LIMITS);
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
   * Starts a run. With `commitFirst` the run is durable before this returns (a 202 answer);
   * otherwise run_started goes out with the first step's journal entry.
   */
  async startRun(
    request: StartRun,
    commitFirst: boolean,
  ): Promise<{ runId: string; finished: Promise<RunState>; durable: Promise<void>; journaled: RunState }> {
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
    let markDurable = () => undefined as void;
    const durable = new Promise<void>((resolve) => {
      markDurable = resolve;
    });
    const drive: Drive = {
      runId,
      stream: runStream(runId),
      workflow,
      committed: initialRunState,
      journal: [],
      state: applyLocal(initialRunState, started, this.now()),
      pending: [started],
      holdsLease: false,
      leaseSeenAt: 0,
      interrupted: false,
      fenced: false,
      markDurable,
      flushing: Promise.resolve(),
      aborted: new AbortController(),
    };
    this.active.set(runId, drive);
    if (commitFirst) {
      try {
        await this.flush(drive);
      } catch (error) {
        this.active.delete(runId);
        throw error;
      }
    }
    // As journaled when this returns: with `commitFirst`, the run as a 202 describes it, no read needed.
    const journaled = drive.committed;
    const finished = this.track(runId, this.drive(drive));
    // A run that ends before it was ever journaled (an engine failure) resolves `durable` too.
    void finished.finally(markDurable);
    return { runId, finished, durable, journaled };
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
          await this.catchUp(drive);
        }
        if (drive.fenced) break;
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
          this.push(drive, runEvent('run_failed', { error: { message: `step ${nextStep} is not in the workflow`, details: drive.workflow.name }, status_code: 500 }));
          await this.flush(drive);
          break;
        }
        await this.runStep(drive, step);
      }
      if (drive.pending.length > 0 && !drive.fenced) await this.flush(drive);
    } catch (error) {
      if (!(error instanceof DriveStopped)) await this.failOnEngineError(drive, error);
    } finally {
      this.active.delete(drive.runId);
      if (drive.holdsLease) await releaseLease(this.options.store.pool, drive.runId, this.owner).catch(() => undefined);
    }
    return drive.state;
  }

  private async runStep(drive: Drive, step: StepDefinition): Promise<void> {
    if (step.kind === 'HumanInTheLoop') return this.runHumanStep(drive, step);
    if (step.kind === 'Agent') return this.runAgentStep(drive, step);
    const started = performance.now();
    this.push(drive, runEvent('step_started', {}, step));
    // Before anything leaves the process, the journal says the step began (it may run twice after a crash).
    if (SLOW_KINDS.includes(step.kind)) await this.flush(drive);
    if (drive.fenced || isTerminal(drive.state.status)) return;
    const execute = STEP_EXECUTORS[step.kind];
    const input = { runId: drive.runId, workflow: drive.workflow, step, context: drive.state.context, principal: drive.state.principal, at: this.now(), visit: timesRun(drive, step.id) };
    const eventsOf = (outcome: StepOutcome) => stepEvents(drive.workflow, step, outcome, Math.round(performance.now() - started));
    if (step.kind === 'ModelOp') {
      // The record write and the step's journal entry commit together, or neither does.
      await this.flush(drive, async (tx) => eventsOf(await execute(input, this.options.steps, tx)));
      return;
    }
    const outcome = await execute(input, this.options.steps);
    for (const event of eventsOf(outcome)) this.push(drive, event);
    // A runner may have touched the outside world: journal it before moving on, unless all that is
    // left are Router and Response steps (nothing leaves the process): then it goes out with the
    // run's end, one commit fewer. A crash before that commit runs the step again, as a crash during it would.
    if (step.kind === 'Router' || step.kind === 'Response') return;
    const next = drive.state.nextStep;
    if (next !== null && !isTerminal(drive.state.status) && !endsPurely(drive.workflow, next)) await this.flush(drive);
  }

  /**
   * First visit: ask for a decision (approval_requested) and wait; the run is released. After a
   * decision (or expiry) the run is resumed here and the step completes with it as its signal.
   */
  private async runHumanStep(drive: Drive, step: StepDefinition): Promise<void> {
    const decided = drive.state.decided;
    if (decided && decided.step_id === step.id) {
      for (const event of stepEvents(drive.workflow, step, humanOutcome(step, decided), 0)) this.push(drive, event);
      await this.flush(drive);
      return;
    }
    this.push(drive, runEvent('step_started', {}, step));
    this.push(drive, runEvent('approval_requested', { approval: humanApproval(drive, step, this.options.clock.now()) }, step));
    await this.flush(drive);
  }

  /** An agent step: journal as it goes; pauses, approvals and aborts stop the drive mid-step. */
  private async runAgentStep(drive: Drive, step: StepDefinition): Promise<void> {
    const started = performance.now();
    const resuming = isStepOpen(drive.journal, step.id);
    if (!resuming) {
      this.push(drive, runEvent('step_started', {}, step));
      await this.flush(drive);
    }
    const startIndex = lastStepStart(drive.journal, step.id) ?? drive.journal.length;
    const agentDeps = this.options.agents;
    if (!agentDeps) {
      for (const event of stepEvents(drive.workflow, step, { signal: 'error', changes: { set: { _last_error: { message: 'no AgentModel is configured', step: step.id } }, unset: [] } }, 0)) this.push(drive, event);
      await this.flush(drive);
      return;
    }
    const consumedSteers = drive.journal.filter((e) => e.type === 'llm_turn').reduce((n, e) => n + (((e.data as RunEventData).payload.steers as string[] | undefined)?.length ?? 0), 0);
    let steersTaken = 0;
    const host: AgentHost = {
      runId: drive.runId,
      workflow: drive.workflow,
      step,
      context: drive.state.context,
      principal: drive.state.principal,
      prior: drive.journal.slice(startIndex + 1).map((e) => ({ type: e.type, payload: (e.data as RunEventData).payload })),
      aborted: drive.aborted.signal,
      journal: async (events) => {
        for (const event of events) this.push(drive, event);
        try {
          await this.flush(drive);
        } catch (error) {
          if (error instanceof DriveStopped) return false;
          throw error;
        }
        // A pause that came in with this append stops the agent here too; it resumes from its journal.
        return !drive.fenced && !isTerminal(drive.state.status) && drive.state.status !== 'paused';
      },
      checkpoint: async () => {
        if (drive.interrupted) {
          drive.interrupted = false;
          await this.catchUp(drive);
        }
        return !drive.fenced && !isTerminal(drive.state.status) && drive.state.status !== 'paused';
      },
      takeSteers: () => {
        const fresh = drive.state.steers.slice(consumedSteers + steersTaken);
        steersTaken += fresh.length;
        return fresh;
      },
      runTool: async (target, args, resultEvents) => {
        const execute = STEP_EXECUTORS[target.kind];
        const toolStep = { ...target, config: { ...target.config, params: { ...((target.config.params as JsonObject | undefined) ?? {}), ...args } } };
        const input = { runId: drive.runId, workflow: drive.workflow, step: toolStep, context: { ...drive.state.context, ...args }, principal: drive.state.principal, at: this.now(), visit: timesRun(drive, target.id) };
        let outcome: StepOutcome | undefined;
        try {
          if (target.kind === 'ModelOp') {
            await this.flush(drive, async (tx) => resultEvents((outcome = await execute(input, this.options.steps, tx))));
          } else {
            outcome = await execute(input, this.options.steps);
            for (const event of resultEvents(outcome)) this.push(drive, event);
            await this.flush(drive);
          }
        } catch (error) {
          if (error instanceof DriveStopped) return undefined;
          throw error;
        }
        return drive.fenced || isTerminal(drive.state.status) ? undefined : outcome;
      },
    };
    const result = await runAgent(host, agentDeps);
    if ('stopped' in result || drive.fenced || isTerminal(drive.state.status)) return;
    for (const event of stepEvents(drive.workflow, step, result.outcome, Math.round(performance.now() - started))) this.push(drive, event);
    await this.flush(drive);
  }

  private async finish(drive: Drive): Promise<void> {
    this.push(drive, finalOutcome(drive.workflow, drive.state.context, this.options.steps.models));
    await this.flush(drive);
  }

  private async failOnEngineError(drive: Drive, error: unknown): Promise<void> {
    this.options.logger.error({ err: error, runId: drive.runId }, 'run failed on an engine error');
    if (drive.fenced || isTerminal(drive.committed.status)) return;
    drive.pending = [];
    drive.state = drive.committed;
    this.push(drive, runEvent('run_failed', { error: { message: 'engine failure', details: (error as Error)?.message ?? String(error) }, status_code: 500 }));
    await this.flush(drive).catch((flushError: unknown) => this.options.logger.error({ err: flushError, runId: drive.runId }, 'could not journal the failure'));
  }

  private push(drive: Drive, event: NewEvent): void {
    drive.pending.push(event);
    drive.state = applyLocal(drive.state, event, this.now());
  }

  /**
   * Appends what is pending (plus what `work` produces inside the same transaction) at the journaled
   * version. A lost race is merged when only control events came in between; a foreign step event
   * means another executor holds the run, and this one stops.
   */
  private flush(drive: Drive, work?: (tx: EventTransaction) => Promise<NewEvent[]>): Promise<void> {
    const flushed = drive.flushing.then(() => this.flushNow(drive, work));
    drive.flushing = flushed.catch(() => undefined);
    return flushed;
  }

  /**
   * Journals a run still waiting for its first append (its first step is taking long, and a sync
   * trigger timed out and answers 202, which must name a run that exists).
   */
  async makeDurable(runId: string): Promise<void> {
    const drive = this.active.get(runId);
    if (!drive || drive.committed.exists) return;
    await this.flush(drive).catch((error: unknown) => {
      // The run ended or moved on meanwhile: it is journaled (or never will be), `durable` says which.
      if (!(error instanceof DriveStopped)) throw error;
    });
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
        drive.committed = appended.reduce((state, e) => evolveRun(state, e.type, e.data as RunEventData, e.recordedAt, e.streamPosition), drive.committed);
        drive.journal.push(...appended);
        drive.pending = drive.pending.slice(taken);
        drive.state = drive.pending.reduce((state, e) => applyLocal(state, e, this.now()), drive.committed);
        drive.markDurable();
        return;
      } catch (error) {
        if (error instanceof LeaseLost) throw new DriveStopped(error.message);
        if (!(error instanceof VersionConflictError)) throw error;
      }
      if (!(await this.reconcile(drive))) throw new DriveStopped('run advanced elsewhere or ended');
    }
    throw new Error(`run ${drive.runId}: too many concurrent changes`);
  }

  /**
   * Takes in the control events that arrived (pause, abort, steer) before the next step starts: with
   * something pending, the append's conflict merges them; with nothing pending there is no append to
   * conflict, so they are read directly.
   */
  private async catchUp(drive: Drive): Promise<void> {
    if (drive.pending.length > 0) await this.flush(drive);
    else await this.reconcile(drive);
  }

  /** Merges events others appended since our last write; false when this drive must stop. */
  private async reconcile(drive: Drive): Promise<boolean> {
    const newer = await this.options.store.readStream(drive.stream, drive.committed.version);
    if (newer.some((e) => !CONTROL_EVENT_TYPES.includes(e.type as RunEventType))) {
      drive.fenced = true;
      return false;
    }
    drive.committed = newer.reduce((state, e) => evolveRun(state, e.type, e.data as RunEventData, e.recordedAt, e.streamPosition), drive.committed);
    drive.journal.push(...newer);
    if (isTerminal(drive.committed.status)) {
      drive.pending = [];
      drive.state = drive.committed;
      return false;
    }
    drive.state = drive.pending.reduce((state, e) => applyLocal(state, e, this.now()), drive.committed);
    return true;
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

  private now(): string {
    return this.options.clock.now().toISOString();
  }
}

/** What a HumanInTheLoop step asks: title, instruction, the form, the context keys it shows, who may answer. */
function humanApproval(drive: Drive, step: StepDefinition, now: Date): JsonObject {
  const ui = (step.config.ui ?? {}) as JsonObject;
  const shown = Array.isArray(ui.display_context) ? ui.display_context.map(String) : [];
  const display = Object.fromEntries(shown.filter((key) => !key.startsWith('_') && key in drive.state.context).map((key) => [key, drive.state.context[key]!]));
  const expiresIn = Number(step.config.expires_in_s ?? 0);
  const group = ((step.config.auth ?? {}) as JsonObject).required_group;
  return {
    approval_id: newId(),
    kind: 'human',
    step_id: step.id,
    workflow: drive.workflow.name,
    title: typeof ui.title === 'string' ? ui.title : step.id,
    instruction: typeof ui.instruction === 'string' ? ui.instruction : null,
    form: (step.config.human_feedback ?? []) as JsonObject[],
    display,
    required_group: typeof group === 'string' ? group : null,
    requester_id: drive.state.principal?.user_id ?? null,
    tenant: drive.state.principal?.tenant ?? null,
    expires_at: expiresIn > 0 ? new Date(now.getTime() + expiresIn * 1000).toISOString() : null,
  };
}

/** Whether the step's latest step_started has no step_completed/step_failed after it (a resume mid-step). */
function isStepOpen(journal: readonly RecordedEvent[], stepId: string): boolean {
  for (let i = journal.length - 1; i >= 0; i--) {
    const event = journal[i]!;
    if ((event.data as RunEventData).agent_id !== stepId) continue;
    if (event.type === 'step_completed' || event.type === 'step_failed') return false;
    if (event.type === 'step_started') return true;
  }
  return false;
}

/** Index in the journal of the step's latest step_started. */
function lastStepStart(journal: readonly RecordedEvent[], stepId: string): number | undefined {
  for (let i = journal.length - 1; i >= 0; i--) {
    const event = journal[i]!;
    if (event.type === 'step_started' && (event.data as RunEventData).agent_id === stepId) return i;
  }
  return undefined;
}

function applyLocal(state: RunState, event: NewEvent, at: string): RunState {
  return evolveRun(state, event.type, event.data as RunEventData, at, state.version + 1);
}

