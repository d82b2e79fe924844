// Triggering runs: each workflow's own path and POST /api/workflows/{name}/runs; 201, 202, 422 or the
// error envelope; the same path with Accept: text/event-stream streams the client step events.
import { Router, type Request, type Response } from 'express';
import type { Authenticator } from '../../http/authenticator.js';
import type { Pool } from '../../db/pool.js';
import type { LogFollower } from '../../eventstore/follow.js';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import type { RunExecutor, StartRun } from '../engine/executor.js';
import { notRecordedError } from '../engine/recording.js';
import { isTerminal, type RunPrincipal, type RunState } from '../state.js';
import { publicView } from '../../workflows/template.js';
import { openEventStream, wantsEventStream } from '../../http/sse.js';
import { AppError, NotFoundError, UnavailableError, ValidationError } from '../../kernel/errors.js';
import type { JsonObject } from '../../kernel/json.js';
import { inspectJson, isJsonObject } from '../../kernel/json.js';
import { compileValidator, type Validator } from '../../kernel/validation.js';
import type { ModelRegistry } from '../../models/registry.js';
import { ClientFrameMapper } from './clientFrames.js';
import { triggerPrincipal } from './gate.js';
import { runStream } from '../events.js';
import { descriptorOfState, runDescriptor } from '../present.js';
import { findRun } from '../queries.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { resolveSchema } from '../../workflows/schemas.js';

export interface TriggerDeps {
  pool: Pool;
  workflows: WorkflowRegistry;
  models: ModelRegistry;
  executor: RunExecutor;
  follower: LogFollower;
  authenticator: Authenticator;
  syncTimeoutMs: number;
}

export function triggerRouter(deps: TriggerDeps): Router {
  const router = Router();
  const inputValidators = new WeakMap<WorkflowDefinition, Validator<JsonObject>>();
  const inputOf = (req: Request, workflow: WorkflowDefinition): JsonObject => {
    const fromQuery = workflow.trigger.method === 'GET';
    // A GET's input is its query string, less the trigger's own `wait` parameter; its values are text.
    const raw = fromQuery ? withoutWait(req.query as JsonObject) : req.body === undefined ? {} : req.body;
    // Bodies were checked at the edge (http/app.ts); a query string becomes stored input only here.
    const unstorable = fromQuery ? inspectJson(raw, ['query']).unstorable : [];
    if (unstorable.length > 0) throw new ValidationError(unstorable);
    if (!isJsonObject(raw)) throw new ValidationError([{ loc: ['body'], msg: 'Input should be a valid dictionary', type: 'dict_type' }]);
    let validator = inputValidators.get(workflow);
    if (!validator) {
      const resolved = resolveSchema(workflow, workflow.trigger.inputSchema, 'input', deps.models);
      const schema = 'schema' in resolved ? resolved.schema : { type: 'object' };
      validator = compileValidator<JsonObject>(schema, fromQuery ? 'query' : 'body', { coerceText: fromQuery });
      inputValidators.set(workflow, validator);
    }
    return validator.parse(raw);
  };

  const trigger = async (req: Request, res: Response, workflow: WorkflowDefinition, via: string) => {
    const principal = await triggerPrincipal(req, workflow, deps.authenticator);
    const input = inputOf(req, workflow);
    const request = { workflow, input, principal, trigger: via };
    try {
      if (wantsEventStream(req)) return await streamRun(deps, req, res, request);
      await runAndAnswer(deps, req, res, request);
    } catch (error) {
      // A 503 for a run a cut-off COMMIT may have recorded names it, for the client to look up.
      if (error instanceof UnavailableError && typeof error.fields.runId === 'string') res.setHeader('X-Svc-Run-Id', error.fields.runId);
      throw error;
    }
  };

  router.post('/api/workflows/:name/runs', async (req, res) => {
    const workflow = deps.workflows.active(String(req.params.name));
    if (!workflow) throw new NotFoundError(`Workflow ${req.params.name} not found`);
    await trigger(req, res, workflow, 'api');
  });

  // Every enabled workflow's own path, resolved per request so that toggles act at once.
  router.use(async (req, res, next) => {
    const candidates = deps.workflows.byTriggerPath(req.path);
    if (candidates.length === 0) return next();
    const workflow = candidates.find((w) => w.trigger.method === req.method);
    if (!workflow) {
      res.setHeader('Allow', [...new Set(candidates.map((w) => w.trigger.method))].join(', '));
      throw new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}`);
    }
    await trigger(req, res, workflow, 'http');
  });
  return router;
}

/**
 * 202 once the run is journaled (not waiting), else its outcome within the sync timeout: 201 (or the
 * error envelope) when it ended, 202 with its state when it goes on. The run id goes out only with a
 * run the journal holds: a run the database did not record is a 503.
 */
async function runAndAnswer(deps: TriggerDeps, req: Request, res: Response, request: StartRun): Promise<void> {
  const wait = req.query.wait !== 'false';
  const { runId, finished, recording, journaled } = await deps.executor.startRun(request, !wait);
  if (!wait) {
    res.setHeader('X-Svc-Run-Id', runId);
    res.status(202).json(descriptorOfState(journaled));
    return;
  }
  // As journaled: a terminal state here is recorded.
  const state = await settleWithin(finished, deps.syncTimeoutMs);
  if (state && isTerminal(state.status)) {
    res.setHeader('X-Svc-Run-Id', runId);
    return answerFinished(res, state);
  }
  await deps.executor.makeDurable(runId);
  const recorded = await recording;
  if (recorded.kind !== 'journaled') throw notRecordedError(runId, recorded);
  res.setHeader('X-Svc-Run-Id', runId);
  await accepted(deps.pool, res, runId, state ?? recorded.state);
}

function withoutWait(query: JsonObject): JsonObject {
  const { wait: _wait, ...input } = query;
  return input;
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

/** 202 with the run as the read model has it; while the database is away, as this process journaled it. */
async function accepted(pool: Pool, res: Response, runId: string, known: RunState): Promise<void> {
  const row = await findRun(pool, runId).catch((error: unknown) => {
    if (isConnectionLoss(error)) return undefined;
    throw error;
  });
  res.status(202).json(row ? runDescriptor(row) : descriptorOfState(known));
}

/** 201 (or the Response step's status) with the output; failures as the error envelope. */
export function answerFinished(res: Response, state: RunState): void {
  if (state.status === 'completed') {
    res.status(state.statusCode ?? 201).json(state.output);
    return;
  }
  const statusCode = state.status === 'aborted' ? 409 : (state.statusCode ?? 500);
  res.status(statusCode).json({
    success: false,
    status_code: statusCode,
    data: Object.keys(publicView(state.context)).length > 0 ? publicView(state.context) : null,
    error: state.status === 'aborted' ? { message: 'The run was aborted', details: '' } : (state.error ?? { message: 'The run failed', details: '' }),
  });
}

/** The client step stream of SPEC "Events": step ... done | error, or suspended with the run descriptor. */
async function streamRun(deps: TriggerDeps, req: Request, res: Response, request: StartRun): Promise<void> {
  // Journaled before the stream opens: its frames come from the journal, and a run the database did
  // not record is a 503, not a stream that never speaks.
  const { runId } = await deps.executor.startRun(request, true);
  res.setHeader('X-Svc-Run-Id', runId);
  const stream = openEventStream(req, res, { credentials: deps.authenticator });
  const frames = new ClientFrameMapper(request.input);
  // Frames go out in journal order even when one needs a read (the descriptor of `suspended`).
  let sending = Promise.resolve();
  const subscription = deps.follower.subscribeToStream(runStream(runId), 0).subscribe((event) => {
    const frame = frames.map(event);
    if (!frame) return;
    sending = sending.then(async () => {
      if (frame.event === 'suspended') {
        // The descriptor is a courtesy: without the database, the frame still goes out with the id.
        const row = await findRun(deps.pool, runId).catch(() => undefined);
        frame.data.run = row ? runDescriptor(row) : { id: runId };
      }
      stream.send(frame.event, frame.data, frame.seq);
      if (frame.isLast) stream.close();
    });
  });
  stream.onClose(() => subscription.unsubscribe());
}
