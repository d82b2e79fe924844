// Server-Sent Events: headers, frames (`id`, `event`, `data`), heartbeat comments, clean close, and
// a close when the caller's credentials end.
import type { Request, Response } from 'express';
import type { Principal } from '../kernel/access.js';
import { sseConnections } from '../metrics/registry.js';

export interface SseStream {
  send(event: string, data: unknown, id?: number | string): boolean;
  /** A frame made by `sseFrame` (made once when many clients get the same event). */
  sendFrame(frame: string): boolean;
  close(): void;
  readonly closed: boolean;
  /** Called once when the client goes away or the stream is closed. */
  onClose(listener: () => void): void;
}

/** Watches a principal's credentials (the Authenticator does). */
export interface CredentialsWatch {
  watch(principal: Principal, onEnd: (reason: string) => void): () => void;
}

export interface EventStreamOptions {
  /**
   * Required, so that no stream forgets it: the stream closes once the credentials of
   * `req.principal` end (logout, session end, expiry), as a new request would be refused then.
   * A request without a principal (a public trigger) has nothing to watch.
   */
  credentials: CredentialsWatch;
  heartbeatMs?: number;
}

export function wantsEventStream(req: Request): boolean {
  return (req.headers.accept ?? '').split(',').some((part) => part.trim().startsWith('text/event-stream'));
}

export function sseFrame(event: string, data: unknown, id?: number | string): string {
  const lines = [
    ...(id !== undefined ? [`id: ${id}`] : []),
    `event: ${event}`,
    ...JSON.stringify(data)
      .split('\n')
      .map((line) => `data: ${line}`),
  ];
  return `${lines.join('\n')}\n\n`;
}

/**
 * One timer pings every open stream of a period: a timer (and its closures) per stream would be
 * held by each of thousands of idle followers. A stream's first ping comes within one period.
 */
class Heartbeat {
  private readonly responses = new Set<Response>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly periodMs: number) {}

  add(res: Response): void {
    this.responses.add(res);
    this.timer ??= setInterval(() => {
      for (const open of this.responses) open.write(': ping\n\n');
    }, this.periodMs);
  }

  delete(res: Response): void {
    this.responses.delete(res);
    if (this.responses.size > 0) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const heartbeats = new Map<number, Heartbeat>();

/** A stream's state lives in fields, its behaviour on the prototype: idle streams cost what they hold. */
class EventStream implements SseStream {
  private isClosed = false;
  private listeners: (() => void)[] | undefined;

  constructor(
    private readonly res: Response,
    private readonly heartbeat: Heartbeat,
  ) {}

  get closed(): boolean {
    return this.isClosed;
  }

  send(event: string, data: unknown, id?: number | string): boolean {
    return this.sendFrame(sseFrame(event, data, id));
  }

  sendFrame(frame: string): boolean {
    if (this.isClosed) return false;
    return this.res.write(frame);
  }

  close(): void {
    if (!this.isClosed) this.res.end();
    this.finish();
  }

  onClose(listener: () => void): void {
    if (this.isClosed) listener();
    else (this.listeners ??= []).push(listener);
  }

  /** Once, whoever ends first: the client (request or response closed) or the server. */
  finish(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    sseConnections.dec();
    this.heartbeat.delete(this.res);
    this.listeners?.splice(0).forEach((listener) => listener());
  }
}

/** node:http's field holding the headers set on a response (null while none is), found by its name. */
let outHeadersField: symbol | undefined;
/** What a stream's `_header` holds once its head went out: node only asks whether it is set. */
const SENT_HEAD = 'HTTP/1.1 (sent)\r\n\r\n';

/**
 * Once its head is sent a stream never sets a header again, yet node:http keeps the response's
 * header map (the security headers: ~1.8 KB of arrays) and the head's text (~600 bytes) for the
 * connection's life. The map is set back to node's own "none set" (null), which its header getters
 * handle; the text to one shared string (node reads it only as "a head was sent", `headersSent`,
 * and writes it only before `_headerSent`). On a Node without the field, the map is kept.
 */
function releaseSentHead(res: Response): void {
  if (!res.headersSent) return;
  outHeadersField ??= Object.getOwnPropertySymbols(res).find((field) => field.description === 'kOutHeaders');
  if (outHeadersField) Reflect.set(res, outHeadersField, null);
  if ((res as { _headerSent?: boolean })._headerSent === true) Reflect.set(res, '_header', SENT_HEAD);
}

/**
 * A stream is authenticated once, when it opens; the caller's token (~500 bytes) is not needed again
 * and would stay in the request's headers for hours. Its value is dropped from the headers and the
 * raw headers (the log line of the stream's end redacts it anyway). The router's continuation is
 * dropped too: nothing calls it once the route answered with a stream, and it holds the router's
 * per-request closures.
 */
function releaseRequest(req: Request): void {
  req.next = undefined;
  if (req.headers.authorization === undefined) return;
  req.headers.authorization = undefined;
  const raw = req.rawHeaders;
  for (let at = 0; at < raw.length; at += 2) if (raw[at]!.toLowerCase() === 'authorization') raw[at + 1] = '';
}

export function openEventStream(req: Request, res: Response, { credentials, heartbeatMs = 15_000 }: EventStreamOptions): SseStream {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // Proxies such as nginx must not buffer the stream.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  releaseSentHead(res);
  releaseRequest(req);
  let heartbeat = heartbeats.get(heartbeatMs);
  if (!heartbeat) heartbeats.set(heartbeatMs, (heartbeat = new Heartbeat(heartbeatMs)));
  const stream = new EventStream(res, heartbeat);
  sseConnections.inc();
  heartbeat.add(res);
  const finish = () => stream.finish();
  req.on('close', finish);
  res.on('close', finish);
  if (req.principal) {
    // A comment says why (clients ignore it); a reconnect then gets the 401 with the same detail.
    const stopWatching = credentials.watch(req.principal, (reason) => {
      if (!stream.closed) res.write(`: ${reason}\n\n`);
      stream.close();
    });
    stream.onClose(stopWatching);
  }
  return stream;
}
