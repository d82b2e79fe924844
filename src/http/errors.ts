// The one map from errors to HTTP: status, body `{detail, code}`, 422 `{detail: [...]}`, never a stack.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { isConnectionLoss } from '../db/connectionLoss.js';
import { AppError, NotFoundError, TooManyRequestsError, UnavailableError, ValidationError, type ErrorCode } from '../kernel/errors.js';
import { ForbiddenKeyError } from '../kernel/json.js';

const STATUS_BY_CODE: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  ALREADY_EXISTS: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  VALIDATION_FAILED: 422,
  IDEMPOTENCY_KEY_REUSED: 422,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  DATA_INTEGRITY: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
};

export interface ErrorBody {
  detail: string;
  code: ErrorCode;
}

/**
 * Errors raised while reading a body (body-parser, raw-body, zlib), made by http-errors: a `status`,
 * `expose: true` for a client's mistake, and a `type` for most (not for a body that fails to decompress).
 */
interface BodyReadError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
  errno?: number;
}

/** A PostgreSQL error (pg's DatabaseError carries a SQLSTATE `code` and a `severity`) of class 22, data exception. */
function isDataException(error: unknown): error is Error & { code: string } {
  const fields = error as { code?: unknown; severity?: unknown } | undefined;
  return error instanceof Error && typeof fields?.code === 'string' && /^22[0-9A-Z]{3}$/.test(fields.code) && typeof fields.severity === 'string';
}

export function statusOf(error: AppError): number {
  return STATUS_BY_CODE[error.code];
}

/** Not saying whether a write got through: the database may have gone away during or after its commit. */
const DATABASE_UNAVAILABLE = 'The database is unavailable (restarting or out of reach); this request was not acknowledged. Try again after Retry-After seconds';

/** Translates anything thrown into an AppError; unknown errors become INTERNAL without details. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // The router marks a path parameter it cannot percent-decode with status 400: a client mistake.
  if (error instanceof URIError && (error as BodyReadError).status === 400) return new AppError('BAD_REQUEST', 'Malformed percent-encoding in the URL path');
  if (error instanceof ForbiddenKeyError) return new AppError('BAD_REQUEST', `Request body may not contain the key "${error.key}"`);
  const bodyError = fromBodyReading(error as BodyReadError | undefined);
  if (bodyError) return bodyError;
  // Safety net behind validation: a value the database refuses as data (SQLSTATE class 22: out of
  // range, bad encoding, invalid datetime...) came with the request.
  if (isDataException(error))
    return new AppError('BAD_REQUEST', 'A value in the request is not valid for the database', { sqlstate: error.code }, { cause: error });
  // The database is restarting or out of reach: a moment to come back, never its internal text.
  if (isConnectionLoss(error)) return new UnavailableError(DATABASE_UNAVAILABLE, {}, { cause: error });
  return new AppError('INTERNAL', 'Internal server error', {}, { cause: error });
}

/** A body that could not be read, decompressed or parsed is the client's mistake: 413 or 400, never 500. */
function fromBodyReading(error: BodyReadError | undefined): AppError | undefined {
  if (!(error instanceof Error) || typeof error.status !== 'number' || error.status >= 500) return undefined;
  if (error.type === 'entity.too.large') return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (error.type === 'entity.parse.failed') return new AppError('BAD_REQUEST', 'Malformed JSON body');
  if (error.type === 'encoding.unsupported') return new AppError('BAD_REQUEST', `${error.message}: send gzip, deflate, br or no Content-Encoding`);
  if (typeof error.type === 'string') return new AppError('BAD_REQUEST', error.message);
  // zlib's own error (it carries an errno), passed on by body-parser with status 400 and no type.
  if (error.expose === true && typeof error.errno === 'number') {
    return new AppError('BAD_REQUEST', 'The request body cannot be decompressed: it does not match its Content-Encoding');
  }
  return undefined;
}

export const errorHandler: ErrorRequestHandler = (error, req, res, _next) => {
  const appError = toAppError(error);
  const status = statusOf(appError);
  if (appError instanceof UnavailableError) req.log?.warn({ err: appError.cause ?? appError }, 'request refused: the database is unavailable');
  else if (status >= 500) req.log?.error({ err: appError.cause ?? appError }, 'request failed');
  else if (isDataException(appError.cause)) req.log?.warn({ err: appError.cause }, 'the database refused a request value that validation let through');
  if (res.headersSent) {
    res.end();
    return;
  }
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  if (appError instanceof UnavailableError || appError instanceof TooManyRequestsError) res.setHeader('Retry-After', String(appError.retryAfterSeconds));
  if (appError instanceof ValidationError) {
    res.status(422).json({ detail: appError.issues });
    return;
  }
  const body: ErrorBody = { detail: appError.message, code: appError.code };
  res.status(status).json(body);
};

export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new NotFoundError(`No route for ${req.method} ${req.path}`));
};
