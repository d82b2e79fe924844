// APICall: one HTTP request with a timeout per attempt; request and response go into the journal.
import { OutboundRefusedError } from '../../../kernel/errors.js';
import type { JsonObject, JsonValue } from '../../../kernel/json.js';
import { describeFailure } from '../../../outbound/failure.js';
import type { OutboundFetch } from '../../../outbound/fetch.js';
import { readPath, render } from '../../../workflows/template.js';
import type { StepReport } from '../../events.js';
import { errorOutcome, type StepExecutor, type StepOutcome } from './types.js';

const DEFAULT_TIMEOUT_MS = 10_000;
const SECRET_HEADERS = /^(authorization|cookie|x-api-key|proxy-authorization)$/i;

interface ApiResponse extends JsonObject {
  status: number;
  body: JsonValue;
}

export const executeApiCall: StepExecutor = async ({ step, context, attempt = 1 }, deps) => {
  const http = render(step.config.http ?? {}, context) as JsonObject;
  const method = String(http.method ?? 'GET').toUpperCase();
  const url = String(http.url ?? '');
  const headers = Object.fromEntries(Object.entries((http.headers as JsonObject | undefined) ?? {}).map(([k, v]) => [k, String(v)]));
  const body = http.body === undefined || http.body === null ? undefined : typeof http.body === 'string' ? http.body : JSON.stringify(http.body);
  if (body !== undefined && typeof http.body !== 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const timeoutMs = Math.max(1, Number(http.timeout_ms ?? DEFAULT_TIMEOUT_MS));
  const request: JsonObject = {
    method,
    url,
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, SECRET_HEADERS.test(k) ? '[redacted]' : v])),
    ...(body !== undefined ? { body: http.body ?? null } : {}),
  };

  const recorded = deps.recorded?.get(step.id);
  let response: ApiResponse | undefined;
  let failure: string | undefined;
  let failureName = 'NetworkError';
  if (recorded) {
    response = recorded.response;
    failure = recorded.failure;
  } else {
    try {
      response = await send(deps.fetch, url, method, headers, body, timeoutMs);
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      failure = timedOut ? `timed out after ${timeoutMs} ms` : describeFailure(error);
      failureName = timedOut ? 'TimeoutError' : error instanceof OutboundRefusedError ? 'OutboundRefusedError' : 'NetworkError';
    }
  }
  // One request per attempt: `retry` (or its shorthand `http.retries`) makes the engine try again, durably.
  const report: StepReport = { request, ...(response ? { response } : {}), ...(failure ? { failure } : {}), attempts: attempt };
  if (!response || response.status >= 400) {
    const message = response ? `HTTP ${response.status} from ${method} ${url}` : `${method} ${url} failed: ${failure}`;
    const name = response ? httpErrorName(response.status) : failureName;
    const outcome = errorOutcome(message, { step: step.id, name, ...(response ? { status: response.status, body: response.body } : {}) });
    return { ...outcome, report };
  }
  return { signal: 'default', changes: { set: extract(step.config.response, response.body), unset: [] }, report } satisfies StepOutcome;
};

/** A status the server may answer differently later (5xx, 408, 429) is a server error; any other 4xx is final for `http.retries`. */
function httpErrorName(status: number): string {
  return status >= 500 || status === 408 || status === 429 ? 'HttpServerError' : 'HttpClientError';
}

async function send(
  fetch: OutboundFetch,
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
): Promise<ApiResponse> {
  const reply = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
  const text = await reply.text();
  let parsed: JsonValue = text;
  if ((reply.headers.get('content-type') ?? '').includes('json') && text.length > 0) {
    try {
      parsed = JSON.parse(text) as JsonValue;
    } catch {
      parsed = text;
    }
  }
  return { status: reply.status, body: parsed };
}

function extract(config: unknown, body: JsonValue): JsonObject {
  const spec = (config ?? {}) as { output_key?: string; extract?: { path: string; as: string }[] };
  const set: JsonObject = {};
  if (spec.output_key) set[spec.output_key] = body;
  for (const { path, as } of spec.extract ?? []) set[as] = readPath(body, path) ?? null;
  if (!spec.output_key && !spec.extract) set.response = body;
  return set;
}
