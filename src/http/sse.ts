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

export function openEventStream(req: Request, res: Response, { credentials, heartbeatMs = 15_000 }: EventStreamOptions): SseStream {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  res.setHeader('Connection', 'keep-alive');
  // Proxies such as nginx must not buffer the stream.
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  const listeners: (() => void)[] = [];
  let closed = false;
  sseConnections.inc();
  const heartbeat = setInterval(() => {
    if (!closed) res.write(': ping\n\n');
  }, heartbeatMs);
  const finish = () => {
    if (closed) return;
    closed = true;
    sseConnections.dec();
    clearInterval(heartbeat);
    listeners.splice(0).forEach((listener) => listener());
  };
  req.on('close', finish);
  res.on('close', finish);
  const stream: SseStream = {
    get closed() {
      return closed;
    },
    send(event, data, id) {
      return this.sendFrame(sseFrame(event, data, id));
    },
    sendFrame(frame) {
      if (closed) return false;
      return res.write(frame);
    },
    close() {
      if (!closed) res.end();
      finish();
    },
    onClose(listener) {
      if (closed) listener();
      else listeners.push(listener);
    },
  };
  if (req.principal) {
    // A comment says why (clients ignore it); a reconnect then gets the 401 with the same detail.
    const stopWatching = credentials.watch(req.principal, (reason) => {
      if (!closed) res.write(`: ${reason}\n\n`);
      stream.close();
    });
    stream.onClose(stopWatching);
  }
  return stream;
}
