// Sending one fuzzed request with a deadline (an SSE answer: its headers only, then closed), and what
// a refused request may not have written: no event of its request id, no row of the tables beside the log.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { FuzzBody, FuzzRequest } from './requests.js';
import type { Tokens } from './tokens.js';

/** Generous: a request that has not answered by then hangs (a run waits SVC_SYNC_TIMEOUT_MS at most). */
export const REQUEST_DEADLINE_MS = 20_000;

export interface Answer {
  status: number;
  contentType: string;
  requestId: string;
  /** `X-Svc-Run-Id`: the answer is a run's (which ran, and may have ended on an error route). */
  runId: string | null;
  /** Parsed JSON, the text when it is not JSON; undefined for an event stream (not read). */
  body: unknown;
}

function payloadOf(body: FuzzBody | undefined): { text?: string; type?: string } {
  if (body === undefined) return {};
  if ('json' in body) return { text: JSON.stringify(body.json) ?? 'null', type: 'application/json' };
  if ('form' in body) return { text: new URLSearchParams(body.form).toString(), type: 'application/x-www-form-urlencoded' };
  if ('deep' in body) {
    const text = body.deep === 'array' ? '['.repeat(10_000) + ']'.repeat(10_000) : '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    return { text, type: 'application/json' };
  }
  return { text: body.raw, type: body.contentType };
}

export async function send(baseUrl: string, request: FuzzRequest, tokens: Tokens): Promise<Answer> {
  const requestId = `fuzz-${randomUUID()}`;
  const headers: Record<string, string> = { ...request.headers, 'x-request-id': requestId };
  const authorization = tokens.header(request.token);
  if (authorization !== undefined) headers.authorization = authorization;
  // fetch sends no body with GET (HEAD is not fuzzed): what a GET carries is its URL and headers.
  const { text, type } = request.method === 'GET' ? {} : payloadOf(request.body);
  if (type !== undefined) headers['content-type'] = type;
  // A body with a Content-Encoding it does not have is the client's mistake (400); without a body the header means nothing.
  if (text === undefined) delete headers['content-encoding'];
  const signal = AbortSignal.timeout(REQUEST_DEADLINE_MS);
  const what = `${request.method} ${request.url}`;
  try {
    const response = await fetch(`${baseUrl}${request.url}`, { method: request.method, headers, signal, ...(text !== undefined ? { body: text } : {}) });
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.startsWith('text/event-stream')) {
      await response.body?.cancel();
      return { status: response.status, contentType, requestId, runId: response.headers.get('x-svc-run-id'), body: undefined };
    }
    const raw = await response.text();
    let body: unknown = raw;
    try {
      body = raw.length > 0 ? JSON.parse(raw) : null;
    } catch {
      // Not JSON: kept as text.
    }
    return { status: response.status, contentType, requestId, runId: response.headers.get('x-svc-run-id'), body };
  } catch (error) {
    if (signal.aborted) throw new Error(`${what}: no answer within ${REQUEST_DEADLINE_MS} ms (a hang)`);
    throw new Error(`${what}: the connection failed: ${String((error as Error).cause ?? error)}`);
  }
}

/** Tables written beside the event log (not projections of it): a refused request leaves them as they were. */
export const SIDE_TABLES = ['svc_idempotency_keys', 'svc_oauth_states', 'svc_login_throttle'] as const;
export type SideCounts = Record<(typeof SIDE_TABLES)[number], number>;

export async function sideCounts(db: pg.Pool): Promise<SideCounts> {
  const columns = SIDE_TABLES.map((table) => `(SELECT count(*)::int FROM ${table}) AS ${table}`).join(', ');
  const { rows } = await db.query<SideCounts>(`SELECT ${columns}`);
  return rows[0]!;
}

export async function eventsOfRequest(db: pg.Pool, requestId: string): Promise<{ type: string; stream_id: string }[]> {
  const { rows } = await db.query<{ type: string; stream_id: string }>(`SELECT type, stream_id FROM events WHERE metadata->>'request_id' = $1`, [requestId]);
  return rows;
}
