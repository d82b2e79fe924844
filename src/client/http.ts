// The client's HTTP layer: base URL, bearer token, JSON in and out, SSE reading (eventsource-parser).
import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { SvcRequestError } from './errors.js';

export interface HttpOptions {
  method?: string;
  body?: unknown;
  form?: Record<string, string>;
  token?: string | undefined;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
}

/** The primary's WAL position after this client's last write: sent back so reads on a replica see it. */
const LSN_HEADER = 'x-svc-lsn';
const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

function lsnValue(text: string): bigint | undefined {
  const match = LSN_TEXT.exec(text);
  return match ? (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`) : undefined;
}

export class HttpCore {
  readonly baseUrl: string;
  token: string | undefined;
  /**
   * The highest `X-Svc-Lsn` a response carried (after a write): every later request sends it, so a
   * service reading from a replica answers nothing older than this client's own writes, on any worker.
   */
  lsn: string | undefined;

  constructor(baseUrl: string, token?: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token;
  }

  /** The raw response (any status). */
  async send(path: string, options: HttpOptions = {}): Promise<Response> {
    const token = options.token ?? this.token;
    const headers: Record<string, string> = { accept: 'application/json', ...(options.headers ?? {}) };
    if (token) headers.authorization = `Bearer ${token}`;
    if (this.lsn) headers[LSN_HEADER] = this.lsn;
    let body: string | undefined;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(options.form).toString();
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: options.method ?? 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    this.keepLsn(response.headers.get(LSN_HEADER));
    return response;
  }

  private keepLsn(text: string | null): void {
    const lsn = text === null ? undefined : lsnValue(text);
    const known = this.lsn === undefined ? undefined : lsnValue(this.lsn);
    if (lsn !== undefined && (known === undefined || lsn > known)) this.lsn = text!;
  }

  /** JSON of a 2xx answer (undefined for 204); any other status throws SvcRequestError. */
  async json<T>(path: string, options: HttpOptions = {}): Promise<T> {
    const response = await this.send(path, options);
    if (!response.ok) throw new SvcRequestError(response.status, await readBody(response));
    return (response.status === 204 ? undefined : await response.json()) as T;
  }
}

export async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The events of a text/event-stream response, in order. */
export async function* readEvents(response: Response): AsyncGenerator<EventSourceMessage> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** `?name=value&...` of the values given (Dates as ISO 8601), or '' when none is. */
export function queryOf(values: Record<string, string | number | Date | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined) params.set(name, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
