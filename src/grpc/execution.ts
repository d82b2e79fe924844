// gRPC-Web (and Connect, gRPC) at /grpc/svc.v1.Execution/RunWorkflow: run a workflow, stream its steps.
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { expressConnectMiddleware } from '@connectrpc/connect-express';
import type { RequestHandler } from 'express';
import type { Observable } from 'rxjs';
import type { Authenticator } from '../http/authenticator.js';
import type { Principal } from '../kernel/access.js';
import type { LogFollower } from '../eventstore/follow.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { toAppError } from '../http/errors.js';
import { ValidationError, type ErrorCode } from '../kernel/errors.js';
import { ForbiddenKeyError, type JsonObject } from '../kernel/json.js';
import type { Pool } from '../db/pool.js';
import { ClientFrameMapper, suspendedRun, type ClientFrame } from '../runs/trigger/clientFrames.js';
import type { RunStarter } from '../runs/trigger/startRun.js';
import { runStream } from '../runs/events.js';
import type { WorkflowRegistry } from '../workflows/registry.js';
import { Execution, StepEventSchema, type RunWorkflowRequest, type StepEvent } from '../contract/gen/svc/v1/execution_pb.js';

export const GRPC_PREFIX = '/grpc';

export interface ExecutionDeps {
  pool: Pool;
  workflows: WorkflowRegistry;
  starter: RunStarter;
  follower: LogFollower;
  authenticator: Authenticator;
  /** SVC_BODY_LIMIT_BYTES: the most a request message may take, compressed or decompressed. */
  readMaxBytes: number;
}

const CONNECT_CODES: Partial<Record<ErrorCode, Code>> = {
  UNAUTHENTICATED: Code.Unauthenticated,
  PERMISSION_DENIED: Code.PermissionDenied,
  NOT_FOUND: Code.NotFound,
  BAD_REQUEST: Code.InvalidArgument,
  VALIDATION_FAILED: Code.InvalidArgument,
  CONFLICT: Code.Aborted,
  UNAVAILABLE: Code.Unavailable,
  TOO_MANY_REQUESTS: Code.ResourceExhausted,
};

export function grpcMiddleware(deps: ExecutionDeps): RequestHandler {
  return expressConnectMiddleware({
    requestPathPrefix: GRPC_PREFIX,
    // Checked against a frame's declared length before it is read, and as the cap on inflating it:
    // an over-limit message is refused (resource_exhausted) without being decompressed whole.
    readMaxBytes: deps.readMaxBytes,
    routes: (router: ConnectRouter) => router.service(Execution, { runWorkflow: (request, context) => runWorkflow(deps, request, context) }),
  });
}

async function* runWorkflow(deps: ExecutionDeps, request: RunWorkflowRequest, context: HandlerContext): AsyncGenerator<StepEvent> {
  const header = context.requestHeader.get('authorization') ?? '';
  const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? (request.tokenFallback || undefined);
  let started: { runId: string; input: JsonObject };
  let caller: Principal | undefined;
  try {
    const workflow = deps.workflows.active(request.workflowName);
    if (!workflow) throw new ConnectError(`Workflow ${request.workflowName} not found`, Code.NotFound);
    caller = token ? await deps.authenticator.principalOfToken(token, undefined) : undefined;
    // Journaled before the first frame: frames come from the journal, and a run the database did not
    // record must fail the call (Unavailable), not leave a stream that never speaks.
    started = await deps.starter.startJournaled({ workflow, caller, readInput: () => parsePayload(request.payloadJson), source: 'message', trigger: 'grpc' });
  } catch (error) {
    throw toConnectError(error);
  }
  context.responseHeader.set('x-svc-run-id', started.runId);
  try {
    yield* stepEvents(deps, started.runId, started.input, caller, context.signal);
  } catch (error) {
    throw toConnectError(error);
  }
}

async function* stepEvents(
  deps: ExecutionDeps,
  runId: string,
  input: JsonObject,
  caller: Principal | undefined,
  signal: AbortSignal,
): AsyncGenerator<StepEvent> {
  // The stream ends with UNAUTHENTICATED once the caller's credentials end (logout, session end, expiry).
  const credentialsEnded = new AbortController();
  const stopWatching = caller
    ? deps.authenticator.watch(caller, (reason) => credentialsEnded.abort(new ConnectError(reason, Code.Unauthenticated)))
    : () => undefined;
  try {
    const events = deps.follower.subscribeToStream(runStream(runId), 0);
    for await (const frame of framesOf(events, new ClientFrameMapper(input), AbortSignal.any([signal, credentialsEnded.signal]))) {
      yield await stepEventOf(deps.pool, runId, frame);
      if (frame.isLast) return;
    }
    if (credentialsEnded.signal.aborted) throw credentialsEnded.signal.reason;
  } finally {
    stopWatching();
  }
}

async function stepEventOf(pool: Pool, runId: string, frame: ClientFrame): Promise<StepEvent> {
  const data = frame.data;
  return create(StepEventSchema, {
    eventType: frame.event,
    runId,
    stepId: String(data.step_id ?? ''),
    kind: String(data.kind ?? ''),
    signal: String(data.signal ?? ''),
    snapshotJson: data.snapshot === undefined ? '' : JSON.stringify(data.snapshot),
    durationMs: Number(data.duration_ms ?? 0),
    errorDetail: String(data.error_detail ?? ''),
    outputJson: frame.event === 'done' ? JSON.stringify(data.output ?? null) : '',
    message: String(data.message ?? ''),
    details: String(data.details ?? ''),
    runJson: frame.event === 'suspended' ? JSON.stringify(await suspendedRun(pool, runId)) : '',
  });
}

/** An rxjs stream of journal events as an async iterator of client frames, ended by `signal`. */
async function* framesOf(events: Observable<RecordedEvent>, mapper: ClientFrameMapper, signal: AbortSignal): AsyncGenerator<ClientFrame> {
  const queue: ClientFrame[] = [];
  let wake: (() => void) | undefined;
  let failed: unknown;
  const subscription = events.subscribe({
    next: (event) => {
      const frame = mapper.map(event);
      if (frame) queue.push(frame);
      wake?.();
    },
    error: (error: unknown) => {
      failed = error;
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (failed) throw failed;
      if (signal.aborted) return;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    subscription.unsubscribe();
  }
}

/** payload_json as JSON (empty: no input); what it may hold is the run starter's to check. */
function parsePayload(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    throw new ConnectError(`payload_json is not valid JSON: ${(error as Error).message}`, Code.InvalidArgument);
  }
}

/** The HTTP error map's verdict (a lost database connection is UNAVAILABLE, never its text) as a Connect code. */
function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof ValidationError) return new ConnectError(JSON.stringify({ detail: error.issues }), Code.InvalidArgument);
  if (error instanceof ForbiddenKeyError) return new ConnectError(`payload_json may not contain the key "${error.key}"`, Code.InvalidArgument);
  const appError = toAppError(error);
  // A run a cut-off COMMIT may have recorded is named, for the client to look up.
  const runId = appError.fields.runId;
  return new ConnectError(appError.message, CONNECT_CODES[appError.code] ?? Code.Internal, typeof runId === 'string' ? { 'x-svc-run-id': runId } : undefined);
}
