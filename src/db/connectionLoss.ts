// Telling a lost database connection (a restart, an outage, a terminated backend) from every other
// database error: the first is worth retrying later, the second is a fault.

/** Socket errors of a connection that cannot be opened or was cut. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a connection the server cut or refused: class 08 (connection exception), 57P01
 * (terminated by an administrator, also what a fast shutdown sends), 57P02 (crash of another
 * backend), 57P03 (starting up, shutting down, in recovery).
 */
const LOST_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;

/**
 * SQLSTATEs of a connection the server refused at its start: 53300 (too many connections: the
 * server's max_connections, a database's or role's CONNECTION LIMIT), and 55000 sent as FATAL (a
 * database with ALLOW_CONNECTIONS false; 55000 as a plain ERROR is a statement's fault, not this).
 */
function isRefusedAtStart(code: string, severity: unknown): boolean {
  return code === '53300' || (code === '55000' && severity === 'FATAL');
}

/**
 * What node-postgres and its pool say when the connection ended under them, could not be opened in
 * time, or was already broken; they carry no code.
 */
const LOST_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
];

/**
 * The COMMIT of a transaction was sent and the connection was lost before its answer: the
 * transaction may or may not have committed. A connection loss too.
 */
export class CommitOutcomeUnknown extends Error {
  constructor(cause: unknown) {
    super('the connection was lost while the transaction was committing; it may or may not have committed', { cause });
    this.name = 'CommitOutcomeUnknown';
  }
}

/** `error` and the errors it was caused by, nearest first. */
function* causesOf(error: unknown): Generator<Error> {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; current = current.cause, depth++) yield current;
}

/** Whether `error`, or an error it was caused by, is a lost or refused database connection. */
export function isConnectionLoss(error: unknown): boolean {
  for (const cause of causesOf(error)) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && (SOCKET_CODES.has(code) || LOST_SQLSTATE.test(code))) return true;
    if (typeof code === 'string' && isRefusedAtStart(code, (cause as { severity?: unknown }).severity)) return true;
    if (LOST_MESSAGES.some((pattern) => pattern.test(cause.message))) return true;
  }
  return false;
}

/** Whether `error` says a COMMIT was cut off in flight (anywhere in its causes). */
export function isCommitOutcomeUnknown(error: unknown): boolean {
  for (const cause of causesOf(error)) if (cause instanceof CommitOutcomeUnknown) return true;
  return false;
}
