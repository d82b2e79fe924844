// Triggering runs: each workflow's own path and POST /api/workflows/{name}/runs; 201, 202, 422 or the
// error envelope; the same path with Accept: text/event-stream streams the client step events.
import { Router, type Request, type Response } from 'express';
import type { Authenticator } from '../../http/authenticator.js';
import type { Pool } from '../../db/pool.js';
import type { LogFollower } from '../../eventstore/follow.js';
import { isConnectionLoss } from '../../db/connectionLoss.js';
import { isTerminal, type RunState } from '../state.js';
import { publicView } from '../../workflows/template.js';
import { wantsEventStream } from '../../http/sse.js';
import { nameRouteTemplate } from '../../http/requestMetrics.js';
import { AppError, NotFoundError, UnavailableError } from '../../kernel/errors.js';
import type { JsonObject } from '../../kernel/json.js';
import { triggerCaller } from './gate.js';
import { parseIdempotencyKey } from '../idempotency/keys.js';
import type { Principal } from '../../kernel/access.js';
import { descriptorOfState, runDescriptor } from '../present.js';
import { findRun } from '../queries.js';
import type { WorkflowDefinition } from '../../workflows/definition.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import type { RunStarter, RunStartRequest } from './startRun.js';
import { answerAsEventStream } from './sse.js';

export interface TriggerDeps {
  pool: Pool;
  workflows: WorkflowRegistry;
  starter: RunStarter;
  follower: LogFollower;
  authenticator: Authenticator;
}

export function triggerRouter(deps: TriggerDeps): Router {
  const router = Router();
  router.post('/api/workflows/:name/runs', async (req, res) => {
    const workflow = deps.workflows.active(String(req.params.name));
    if (!workflow) throw new NotFoundError(`Workflow ${req.params.name} not found`);
    await trigger(deps, req, res, workflow, 'api');
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
    nameRouteTemplate(res, workflow.trigger.path ?? req.path);
    await trigger(deps, req, res, workflow, 'http');
  });
  return router;
}

async function trigger(deps: TriggerDeps, req: Request, res: Response, workflow: WorkflowDefinition, via: string): Promise<void> {
  const isFromQuery = workflow.trigger.method === 'GET';
  const key = parseIdempotencyKey(req.headers['idempotency-key']);
  const caller = await triggerCaller(req, workflow, deps.authenticator);
  const request: RunStartRequest = {
    workflow,
    caller,
    // A GET's input is its query string, less the trigger's own `wait` parameter; its values are text.
    readInput: () => (isFromQuery ? withoutWait(req.query as JsonObject) : req.body === undefined ? {} : req.body),
    source: isFromQuery ? 'query' : 'body',
    trigger: via,
    idempotency: key === undefined ? undefined : { key, caller: callerOfKey(req, caller) },
  };
  try {
    if (wantsEventStream(req)) return await answerAsEventStream(deps, req, res, request);
    await answerRun(deps, req, res, request);
  } catch (error) {
    // A 503 for a run a cut-off COMMIT may have recorded names it, for the client to look up.
    if (error instanceof UnavailableError && typeof error.fields.runId === 'string') res.setHeader('X-Svc-Run-Id', error.fields.runId);
    throw error;
  }
}

/**
 * Whose Idempotency-Key it is: a user (in their tenant), or for a public workflow called without a token
 * the client address (Express `req.ip`: the peer, or what a trusted proxy forwarded).
 */
function callerOfKey(req: Request, caller: Principal | undefined): string {
  return caller ? `user:${caller.tenant ?? ''}:${caller.userId}` : `address:${req.ip ?? req.socket.remoteAddress ?? ''}`;
}

/** A replay names the first run and says it is one. */
function markRun(res: Response, runId: string, replayed: boolean | undefined): void {
  res.setHeader('X-Svc-Run-Id', runId);
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
}

function withoutWait(query: JsonObject): JsonObject {
  const { wait: _wait, ...input } = query;
  return input;
}

/**
 * 202 once the run is journaled (not waiting), else its outcome within the sync timeout: 201 (or the
 * error envelope) when it ended, 202 with its state when it goes on. The run id goes out only with a
 * run the journal holds: a run the database did not record is a 503.
 */
async function answerRun(deps: TriggerDeps, req: Request, res: Response, request: RunStartRequest): Promise<void> {
  if (req.query.wait === 'false') {
    const { runId, journaled, replayed } = await deps.starter.startJournaled(request);
    markRun(res, runId, replayed);
    // A replay of a run that has ended answers as the run ended.
    if (replayed && isTerminal(journaled.status)) return answerFinished(res, journaled);
    res.status(202).json(descriptorOfState(journaled));
    return;
  }
  const { runId, state, replayed } = await deps.starter.startAndWait(request);
  markRun(res, runId, replayed);
  if (isTerminal(state.status)) return answerFinished(res, state);
  await accepted(deps.pool, res, runId, state);
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
function answerFinished(res: Response, state: RunState): void {
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
