// Errors the client throws: a failed run, a run that waits for a human, a refused call.
import type { RunDescriptor, WorkflowEnvelope } from '../contract/types.js';

/** The run ended in failure; `envelope` is the server's error envelope when there was one. */
export class SvcRunFailedError extends Error {
  readonly code = 'RUN_FAILED';
  constructor(
    message: string,
    readonly runId: string | undefined,
    readonly envelope?: WorkflowEnvelope,
    readonly details?: string,
  ) {
    super(message);
    this.name = 'SvcRunFailedError';
  }
}

/** The run waits (a human, a pause) or outlived the request: `run` is its descriptor. */
export class SvcRunPendingError extends Error {
  readonly code = 'RUN_PENDING';
  constructor(readonly run: RunDescriptor) {
    super(`Run ${run.id} is ${run.status}`);
    this.name = 'SvcRunPendingError';
  }
}

/** The server refused the call (401, 403, 404, 409, 422...); `body` is its error body. */
export class SvcRequestError extends Error {
  readonly code = 'REQUEST_REFUSED';
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const detail = typeof body === 'object' && body !== null && 'detail' in body ? (body as { detail: unknown }).detail : body;
    super(`HTTP ${status}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`);
    this.name = 'SvcRequestError';
  }
}
