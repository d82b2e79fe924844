// Starting a run, the same for every transport (HTTP triggers, gRPC-Web, MCP): the workflow's gate, the
// input checked against its input schema, the start, the wait within SVC_SYNC_TIMEOUT_MS, and an
// answer only for a run the journal holds (docs/operations.md, "During a database outage").
import type { Principal } from '../../kernel/access.js';
import { ConcurrencyLimitError, UnavailableError, ValidationError } from '../../kernel/errors.js';
import { inspectJson, isJsonObject, refuseUnsafeJson, type JsonObject } from '../../kernel/json.js';
import { compileValidator, type Validator } from '../../kernel/validation.js';
import type { ModelRegistry } from '../../models/registry.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import { inputSchemaOf } from '../../workflows/schemas.js';
import type { RunExecutor } from '../engine/executor.js';
import type { StartedRun, StartRun } from '../engine/runStart.js';
import { notRecordedError } from '../engine/recording.js';
import type { ScheduleTrigger } from '../events.js';
import { isTerminal, type RunState } from '../state.js';
import type { IdempotencyKeys } from '../idempotency/keys.js';
import { passGate } from './gate.js';

/**
 * Where a run's input comes from, which says what is left to check:
 * - `body`: a JSON request body, already checked at the HTTP edge (http/app.ts): HTTP triggers, MCP;
 * - `query`: a query string, its values text read as the schema's types (a GET trigger);
 * - `message`: JSON that reached no HTTP edge check (a gRPC payload).
 */
export type InputSource = 'body' | 'query' | 'message';

export interface RunStartRequest {
  workflow: WorkflowDefinition;
  /** The verified caller; undefined when none came (a public workflow runs without). */
  caller: Principal | undefined;
  /** Read only once the caller passed the gate: a transport's parse error never answers before a 401 or 403. */
  readInput: () => unknown;
  source: InputSource;
  /** How the run was started, as journaled: `api`, `http`, `grpc`, `mcp`. */
  trigger: string;
  /** An Idempotency-Key and who sent it (HTTP triggers): a repeat answers with the key's first run. */
  idempotency?: { key: string; caller: string } | undefined;
}

export interface ScheduledStart {
  workflow: WorkflowDefinition;
  input: JsonObject;
  runId: string;
  schedule: ScheduleTrigger;
}

/** A started run the journal holds: ended (`state` terminal, its end journaled), or going on. */
export interface SettledRun {
  runId: string;
  state: RunState;
  /** The run of an earlier request with the same Idempotency-Key: nothing was started. */
  replayed?: boolean;
}

export interface RunStarterDeps {
  models: ModelRegistry;
  executor: RunExecutor;
  /** SVC_SYNC_TIMEOUT_MS: how long a start that waits waits for the run to end. */
  syncTimeoutMs: number;
  idempotency: IdempotencyKeys;
}

const NOT_AN_OBJECT = { loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' };

/** Where MCP tool listings read it too. */
export { inputSchemaOf };

export class RunStarter {
  /** Compiled once per workflow version and input source (a query's text is coerced, a body's is not). */
  private readonly validators = new WeakMap<WorkflowDefinition, Map<'body' | 'query', Validator<JsonObject>>>();

  constructor(private readonly deps: RunStarterDeps) {}

  /**
   * Starts the run and waits for it within the sync timeout. A run that goes on is made durable
   * first: the answer names only a run the journal holds, else this throws UnavailableError.
   */
  async startAndWait(request: RunStartRequest): Promise<SettledRun> {
    const { executor, syncTimeoutMs } = this.deps;
    const start = await this.admitKeyed(request);
    // A replay waits for the first run as long as the first request did.
    if ('replay' in start) return { runId: start.replay, state: await this.replayState(start.replay, true), replayed: true };
    const deadline = Date.now() + syncTimeoutMs;
    const { runId, finished, recording } = await this.startClaimed(request, start, false);
    // As journaled: a terminal state here is recorded.
    const state = await this.queuedToEnd(runId, await settleWithin(finished, syncTimeoutMs), deadline);
    if (state && isTerminal(state.status)) return { runId, state };
    await executor.makeDurable(runId);
    const recorded = await recording;
    if (recorded.kind !== 'journaled') throw notRecordedError(runId, recorded);
    return { runId, state: state ?? recorded.state };
  }

  /**
   * Starts the run journaled before this answers (a 202 that does not wait, a stream whose frames come
   * from the journal), or throws UnavailableError when the database did not record it.
   */
  async startJournaled(request: RunStartRequest): Promise<{ runId: string; input: JsonObject; journaled: RunState; replayed?: boolean }> {
    const start = await this.admitKeyed(request);
    if ('replay' in start) {
      const journaled = await this.replayState(start.replay, false);
      return { runId: start.replay, input: journaled.input, journaled, replayed: true };
    }
    const { runId, journaled } = await this.startClaimed(request, start, true);
    return { runId, input: start.input, journaled };
  }

  /** A start its concurrency limit refused gives its Idempotency-Key back: the client's retry after Retry-After starts the run. */
  private async startClaimed(request: RunStartRequest, start: StartRun, commitFirst: boolean): Promise<StartedRun> {
    try {
      return await this.deps.executor.startRun(start, commitFirst);
    } catch (error) {
      if (error instanceof ConcurrencyLimitError && request.idempotency && start.runId) {
        await this.deps.idempotency.release({ workflow: start.workflow.name, ...request.idempotency }, start.runId, 'concurrency limit');
      }
      throw error;
    }
  }

  /** Admitted, then its Idempotency-Key claimed for the run (or the run of the key's first request). */
  private async admitKeyed(request: RunStartRequest): Promise<StartRun | { replay: string }> {
    const start = this.admit(request);
    if (!request.idempotency) return start;
    const scope = { workflow: start.workflow.name, ...request.idempotency };
    const claim = await this.deps.idempotency.claim(scope, start.input);
    return claim.kind === 'replay' ? { replay: claim.runId } : { ...start, runId: claim.runId };
  }

  /**
   * A run queued for a concurrency slot is waited for as a long run is, within the sync timeout: its
   * drive here ended, and the worker that dequeues it may be another.
   */
  private async queuedToEnd(runId: string, state: RunState | undefined, deadline: number): Promise<RunState | undefined> {
    if (state?.slot?.state !== 'waiting' || Date.now() >= deadline) return state;
    return (await this.deps.idempotency.runState(runId, deadline - Date.now(), true)) ?? state;
  }

  /** The first run of a key, within the sync timeout; a claim whose run is not journaled by then is a 503. */
  private async replayState(runId: string, untilEnd: boolean): Promise<RunState> {
    const state = await this.deps.idempotency.runState(runId, this.deps.syncTimeoutMs, untilEnd);
    if (!state) throw new UnavailableError(`The run of this Idempotency-Key is not journaled yet; retry`, { runId });
    return state;
  }

  /**
   * Starts a schedule's run under the id its tick reserved, journaled before this returns; with
   * `wait`, waits for it within the sync timeout. No caller: the schedule is part of the deployment.
   * A second start of the same id fails with VersionConflictError (its run_started exists).
   */
  async startScheduled(request: ScheduledStart, wait: boolean): Promise<SettledRun> {
    const { workflow, runId, schedule } = request;
    const input = this.validatorOf(workflow, 'body').parse(request.input);
    const started = await this.deps.executor.startRun({ workflow, input, principal: null, trigger: 'schedule', runId, schedule }, true);
    const state = wait ? await settleWithin(started.finished, this.deps.syncTimeoutMs) : undefined;
    return { runId, state: state ?? started.journaled };
  }

  /** A run input checked (and defaulted) by the workflow's input schema as a JSON body is: a fork's merged input. */
  checkInput(workflow: WorkflowDefinition, input: JsonObject): JsonObject {
    return this.validatorOf(workflow, 'body').parse(input);
  }

  /** The gate, then the input checks: nothing starts when either refuses. */
  private admit(request: RunStartRequest): StartRun {
    const { workflow, source } = request;
    const principal = passGate(workflow, request.caller);
    const input = request.readInput();
    if (source === 'message') refuseUnsafeJson(input, 'body');
    // A query string becomes stored input only here.
    const unstorable = source === 'query' ? inspectJson(input, ['query']).unstorable : [];
    if (unstorable.length > 0) throw new ValidationError(unstorable);
    if (!isJsonObject(input)) throw new ValidationError([NOT_AN_OBJECT]);
    return { workflow, input: this.validatorOf(workflow, source === 'query' ? 'query' : 'body').parse(input), principal, trigger: request.trigger };
  }

  private validatorOf(workflow: WorkflowDefinition, location: 'body' | 'query'): Validator<JsonObject> {
    let byLocation = this.validators.get(workflow);
    if (!byLocation) this.validators.set(workflow, (byLocation = new Map()));
    let validator = byLocation.get(location);
    if (!validator) {
      validator = compileValidator<JsonObject>(inputSchemaOf(workflow, this.deps.models), location, { coerceText: location === 'query' });
      byLocation.set(location, validator);
    }
    return validator;
  }
}

async function settleWithin(finished: Promise<RunState>, timeoutMs: number): Promise<RunState | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  try {
    return await Promise.race([finished, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
