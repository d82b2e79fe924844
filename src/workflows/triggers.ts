// Triggering runs: each workflow's own path and POST /api/workflows/{name}/runs; 201, 202, 422 or the
// error envelope; the same path with Accept: text/event-stream streams the client step events.
import { Router, type Request, type Response } from 'express';
import type { Authenticator } from '../auth/middleware.js';
import { isAllowed, type Principal } from '../auth/principal.js';
import type { Pool } from '../db/pool.js';
import type { LogFollower } from '../eventstore/follow.js';
import type { RunExecutor } from '../engine/executor.js';
import type { RunPrincipal, RunState } from '../engine/state.js';
import { publicView } from '../engine/template.js';
import { openEventStream, wantsEventStream } from '../http/sse.js';
import { AppError, NotFoundError, PermissionDeniedError, UnauthenticatedError, ValidationError } from '../kernel/errors.js';
import type { JsonObject } from '../kernel/json.js';
import { isJsonObject } from '../kernel/json.js';
import { compileValidator, type Validator } from '../kernel/validation.js';
import type { ModelRegistry } from '../models/registry.js';
import { ClientFrameMapper } from '../runs/clientFrames.js';
import { runStream } from '../runs/events.js';
import { descriptorOfState, runDescriptor } from '../runs/present.js';
import { findRun } from '../runs/queries.js';
import type { WorkflowDefinition } from './definition.js';
import type { WorkflowRegistry } from './registry.js';
import { resolveSchema } from './schemas.js';

export interface TriggerDeps {
  pool: Pool;
  workflows: WorkflowRegistry;
  models: ModelRegistry;
  executor: RunExecutor;
  follower: LogFollower;
  authenticator: Authenticator;
  syncTimeoutMs: number;
}

/** The workflow's gates: declared scope AND group; a token is needed unless the workflow is public. */
export async function triggerPrincipal(req: Request, workflow: WorkflowDefinition, authenticator: Authenticator): Promise<RunPrincipal | null> {
  const gated = workflow.requiredScope !== null || workflow.requiredGroup !== null;
  if (workflow.trigger.isPublic && !gated && !req.headers.authorization) return null;
  return triggerPrincipalOf(workflow, await authenticator.principalOf(req));
}

/** The same gates for an already verified caller (undefined: no token was sent). */
export async function triggerPrincipalOf(workflow: WorkflowDefinition, principal: Principal | undefined): Promise<RunPrincipal | null> {
  const gated = workflow.requiredScope !== null || workflow.requiredGroup !== null;
  if (!principal) {
    if (workflow.trigger.isPublic && !gated) return null;
    throw new UnauthenticatedError('Not authenticated');
  }
  const rule = { scope: workflow.requiredScope ?? undefined, groups: workflow.requiredGroup ? [workflow.requiredGroup] : undefined };
  if (!isAllowed(principal, rule)) throw new PermissionDeniedError(`Permission denied: ${workflow.name} requires ${[workflow.requiredScope, workflow.requiredGroup].filter(Boolean).join(' and ')}`);
  return { user_id: principal.userId, groups: principal.groups, scopes: principal.scopes, tenant: principal.tenant ?? null };
}

export function triggerRouter(deps: TriggerDeps): Router {
  const router = Router();
  const inputValidators = new WeakMap<WorkflowDefinition, Validator<JsonObject>>();
  const inputOf = (req: Request, workflow: WorkflowDefinition): JsonObject => {
    const fromQuery = workflow.trigger.method === 'GET';
    // A GET's input is its query string, less the trigger's own `wait` parameter; its values are text.
    const raw = fromQuery ? withoutWait(req.query as JsonObject) : req.body === undefined ? {} : req.body;
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
    if (wantsEventStream(req)) return streamRun(deps, req, res, request);
    const wait = req.query.wait !== 'false';
    const { runId, finished, durable, journaled } = await deps.executor.startRun(request, !wait);
    res.setHeader('X-Svc-Run-Id', runId);
    if (!wait) {
      res.status(202).json(descriptorOfState(journaled));
      return;
    }
    const state = await settleWithin(finished, deps.syncTimeoutMs);
    if (!state || state.status === 'paused' || state.status === 'waiting_human' || state.status === 'waiting_approval' || state.status === 'running' || state.status === 'queued') {
      await deps.executor.makeDurable(runId);
      await durable;
      return accepted(deps.pool, res, runId, state);
    }
    answerFinished(res, state);
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

async function accepted(pool: Pool, res: Response, runId: string, state?: RunState): Promise<void> {
  const row = await findRun(pool, runId);
  res.status(202).json(row ? runDescriptor(row) : state ? descriptorOfState(state) : { id: runId, status: 'queued' });
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
async function streamRun(deps: TriggerDeps, req: Request, res: Response, request: Parameters<RunExecutor['startRun']>[0]): Promise<void> {
  const { runId } = await deps.executor.startRun(request, false);
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
        const row = await findRun(deps.pool, runId);
        frame.data.run = row ? runDescriptor(row) : { id: runId };
      }
      stream.send(frame.event, frame.data, frame.seq);
      if (frame.isLast) stream.close();
    });
  });
  stream.onClose(() => subscription.unsubscribe());
}
