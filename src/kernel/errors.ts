// The one family of application errors: a stable string code and structured fields, no HTTP numbers.

/** Every error code a response body may carry, in the error shape `{detail, code}`. */
export const ERROR_CODES = [
  'UNAUTHENTICATED',
  'PERMISSION_DENIED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'CONFLICT',
  'BAD_REQUEST',
  'VALIDATION_FAILED',
  'IDEMPOTENCY_KEY_REUSED',
  'PAYLOAD_TOO_LARGE',
  'TOO_MANY_REQUESTS',
  'METHOD_NOT_ALLOWED',
  'NOT_IMPLEMENTED',
  'UNAVAILABLE',
  'DATA_INTEGRITY',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** One entry of a 422 `detail` array. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, fields: Record<string, unknown> = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.fields = fields;
  }
}

export class NotFoundError extends AppError {
  constructor(message = 'Not found', fields: Record<string, unknown> = {}) {
    super('NOT_FOUND', message, fields);
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, fields: Record<string, unknown> = {}) {
    super('BAD_REQUEST', message, fields);
  }
}

export class AlreadyExistsError extends AppError {
  constructor(message: string, fields: Record<string, unknown> = {}) {
    super('ALREADY_EXISTS', message, fields);
  }
}

/** An Idempotency-Key sent again with another request body. */
export class IdempotencyKeyReusedError extends AppError {
  constructor(fields: Record<string, unknown> = {}) {
    super('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with another request body', fields);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, fields: Record<string, unknown> = {}) {
    super('CONFLICT', message, fields);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'Not authenticated') {
    super('UNAUTHENTICATED', message);
  }
}

export class PermissionDeniedError extends AppError {
  constructor(message = 'Permission denied') {
    super('PERMISSION_DENIED', message);
  }
}

/**
 * A request svc was about to send out, refused by the destination policy (production reaches public
 * addresses and what SVC_OUTBOUND_ALLOW names). The message names the host and why.
 */
export class OutboundRefusedError extends AppError {
  constructor(message: string, fields: Record<string, unknown> = {}) {
    super('PERMISSION_DENIED', message, fields);
  }
}

/** Seconds a client is told to wait (Retry-After) before trying again while the database is away. */
export const RETRY_AFTER_SECONDS = 5;

/**
 * The service cannot do this now: its database is restarting or out of reach. The same request can
 * succeed later (503 with Retry-After). `fields.runId` names a run that may have been recorded.
 */
export class UnavailableError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(message: string, fields: Record<string, unknown> = {}, options?: ErrorOptions) {
    super('UNAVAILABLE', message, { retryAfterSeconds: RETRY_AFTER_SECONDS, ...fields }, options);
    this.retryAfterSeconds = RETRY_AFTER_SECONDS;
  }
}

/**
 * Too many attempts: the same request can succeed after `retryAfterSeconds` (429 with Retry-After).
 * Login throttling answers it, also for the right password while the throttle holds.
 */
export class TooManyRequestsError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number, fields: Record<string, unknown> = {}) {
    super('TOO_MANY_REQUESTS', message, { retryAfterSeconds, ...fields });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Seconds a client refused by a full concurrency limit is told to wait before starting the run again. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 1;

/**
 * A workflow with `spec.concurrency.on_limit: reject` has every slot of the run's key taken: nothing
 * was started (429 with Retry-After).
 */
export class ConcurrencyLimitError extends TooManyRequestsError {
  constructor(workflow: string, key: string, limit: number) {
    const of = key === '' ? workflow : `${workflow} (key ${JSON.stringify(key)})`;
    super(
      `${limit} run(s) of ${of} are running, its concurrency limit: nothing was started; retry after Retry-After seconds`,
      CONCURRENCY_RETRY_AFTER_SECONDS,
      {
        workflow,
        key,
        limit,
      },
    );
  }
}

/** Request validation failure; rendered as 422 with the `detail` array. */
export class ValidationError extends AppError {
  readonly issues: readonly ValidationIssue[];

  constructor(issues: ValidationIssue[]) {
    super('VALIDATION_FAILED', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ') || 'Invalid request');
    this.issues = issues;
  }
}

/**
 * A lost optimistic-concurrency race: the stream was not at the version the writer expected.
 * Callers usually re-read and retry; unhandled, it answers 409.
 */
export class VersionConflictError extends AppError {
  constructor(
    readonly streamId: string,
    readonly expectedVersion: number | 'any',
    readonly actualVersion: number | null,
  ) {
    super('CONFLICT', `Stream ${streamId} is at version ${actualVersion ?? 'unknown'}, expected ${expectedVersion}`, {
      streamId,
      expectedVersion,
      actualVersion,
    });
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/**
 * A stored value that must authenticate does not (a tampered or corrupted ciphertext, or one sealed
 * under a key this service does not hold): never read as plaintext, never shown as anything else.
 */
export class DataIntegrityError extends AppError {
  constructor(message: string, fields: Record<string, unknown> = {}) {
    super('DATA_INTEGRITY', message, fields);
  }
}
