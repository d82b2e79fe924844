// The PostgreSQL pool: one type mapping for the whole service, UTC sessions, lossless timestamps.
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool, a checked-out client, a transaction. */
export type Queryable = Pick<pg.ClientBase, 'query'>;

const TIMESTAMPTZ_OID = 1184;
const TIMESTAMP_OID = 1114;
const DATE_OID = 1082;
const INT8_OID = 20;

/**
 * int8 as number: positions and counts stay far below 2^53.
 * timestamptz as an ISO 8601 string with the database's microseconds (a JS Date would cut them).
 */
const typeParsers: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (format === 'binary') return pg.types.getTypeParser(oid, 'binary');
    switch (oid) {
      case INT8_OID:
        return (value: string) => Number(value);
      case TIMESTAMPTZ_OID:
        return isoFromPgTimestamptz;
      case TIMESTAMP_OID:
      case DATE_OID:
        return (value: string) => value;
      default:
        return pg.types.getTypeParser(oid, 'text');
    }
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/**
 * `2026-11-22 02:22:58.05+00` (UTC session, ISO DateStyle) -> `2026-11-22T02:22:58.050Z`.
 * PostgreSQL drops trailing zeros of the fraction; padding to milliseconds (or to microseconds when
 * it has more digits) makes every timestamp the service answers have one shape, the shape of
 * `Date.toISOString()` that the events carry. Joined rather than concatenated: a concatenation is a
 * tree of string pieces (about 150 bytes more than these 24 characters flat), and read models hold
 * their timestamps for long (a rebuild one per row it folds): every garbage collection copies them.
 */
export function isoFromPgTimestamptz(value: string): string {
  // A statement's rows mostly share one time (an append's events, a transaction's now()): parsed once, one string kept.
  if (value !== lastTimestamptzText) {
    lastTimestamptzIso = parseTimestamptz(value);
    lastTimestamptzText = value;
  }
  return lastTimestamptzIso;
}

// The last text parsed and its answer (two strings, no object allocated per parse: a rebuild parses one per row).
let lastTimestamptzText = '';
let lastTimestamptzIso = '';

function parseTimestamptz(value: string): string {
  if (value === 'infinity' || value === '-infinity') return value;
  const match = /^(\d{4,}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00(?::00)?$/.exec(value);
  if (!match) return value.replace(' ', 'T').replace(/\+00(:00)?$/, 'Z');
  const fraction = match[3] ?? '';
  return [match[1], 'T', match[2], '.', fraction.padEnd(fraction.length > 3 ? 6 : 3, '0'), 'Z'].join('');
}

export interface PoolOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /** How long opening a connection, or waiting for a free one, may take (0: no limit). */
  connectTimeoutMs?: number;
}

export function connectionConfig(connectionString: string, applicationName = 'svc'): pg.ClientConfig {
  return {
    connectionString,
    types: typeParsers,
    options: '-c TimeZone=UTC -c DateStyle=ISO',
    application_name: applicationName,
  };
}

export function createPool({ connectionString, max = 10, applicationName, connectTimeoutMs = 0 }: PoolOptions): Pool {
  const pool = new pg.Pool({
    ...connectionConfig(connectionString, applicationName),
    // A checked-out client sends each query at once, not after the previous answer: a transaction
    // writes statements that do not depend on each other's answers in one round trip (the journal
    // commit: BEGIN, INSERT and the read-model row reads together). Each query keeps its own Sync,
    // so its answer or error is its own; code that awaits each query behaves as without it.
    pipeline: true,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor may a checked-out one: see `survivesConnectionLoss`.
  pool.on('connect', survivesConnectionLoss);
  return pool;
}

/**
 * A client whose connection is lost (PostgreSQL restarts, a backend is terminated) emits 'error';
 * while it is checked out of the pool, or is a client of its own, nothing else listens, and an
 * unheard 'error' ends the process. Its holder learns of the loss from the query that fails (every
 * later one fails too), and the pool drops a broken client when it is released.
 */
export function survivesConnectionLoss(client: pg.ClientBase): void {
  client.on('error', () => undefined);
}

/** A client of its own (not from a pool), connected, that a lost connection cannot take the process down with. */
export async function connectClient(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  survivesConnectionLoss(client);
  await client.connect();
  return client;
}

/** Replaces the database name of a PostgreSQL URL. */
export function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}
