// Server-Sent Events in tests, parsed by eventsource-parser: an open stream read frame by frame with
// deadlines, or a whole answer read to its end.
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

export interface SseFrame {
  id?: string;
  event?: string;
  /** The frame's data parsed as JSON; undefined when it is empty. `any`: tests read its fields unchecked. */
  data: any;
}

/** What one read of a response body gives. */
type BodyChunk = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>;

export interface SseRequest {
  token?: string;
  method?: string;
  /** Sent as the JSON body. */
  json?: unknown;
  headers?: Record<string, string>;
}

/** An answer read as an event stream: frame by frame (`next`, `until`) or to its end, each read with a deadline. */
export class SseReader {
  /** Every frame taken so far (by `next`, `until` or `readToEnd`), in order. */
  readonly frames: SseFrame[] = [];
  /** The comment lines received so far (`: ping`, why the server closed), without the colon. */
  readonly comments: string[] = [];
  private readonly parsed: SseFrame[] = [];
  private readonly parser: EventSourceParser;
  private readonly decoder = new TextDecoder();
  private received = '';
  private ended = false;
  /** A read still under way after a deadline passed: the next call takes its chunk, so none is lost. */
  private pendingRead: Promise<BodyChunk> | undefined;

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly body: ReadableStreamDefaultReader<Uint8Array> | undefined,
    private readonly abort: AbortController,
    wholeText: string,
  ) {
    this.received = wholeText;
    this.parser = createParser({
      onEvent: (message) => this.parsed.push(toFrame(message)),
      onComment: (comment) => this.comments.push(comment),
    });
  }

  /** Sends the request (`Accept: text/event-stream`); an answer that is no event stream is read whole into `text`. */
  static async open(url: string, request: SseRequest = {}): Promise<SseReader> {
    const headers: Record<string, string> = { accept: 'text/event-stream', ...request.headers };
    if (request.token) headers.authorization = `Bearer ${request.token}`;
    if (request.json !== undefined) headers['content-type'] = 'application/json';
    const abort = new AbortController();
    const response = await fetch(url, {
      method: request.method ?? 'GET',
      headers,
      signal: abort.signal,
      ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : {}),
    });
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      return new SseReader(response.status, response.headers, undefined, abort, await response.text());
    }
    return new SseReader(response.status, response.headers, response.body!.getReader(), abort, '');
  }

  /** The body as received so far: all of it for an answer that is no event stream. */
  get text(): string {
    return this.received;
  }

  get isEnded(): boolean {
    return this.ended || !this.body;
  }

  /** The next frame, or undefined once the stream ended; rejects when none arrives within `timeoutMs`. */
  async next(timeoutMs = 5000): Promise<SseFrame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = this.parsed.shift();
      if (frame) {
        this.frames.push(frame);
        return frame;
      }
      if (this.isEnded) return undefined;
      const chunk = await this.read(deadline - Date.now());
      if (chunk === 'deadline') throw new Error(`no SSE frame within ${timeoutMs} ms (have ${this.frames.map((f) => f.event).join(',')})`);
      this.take(chunk);
    }
  }

  /** Every frame until the server ends the stream. */
  async readToEnd(timeoutMs = 10_000): Promise<SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.next(Math.max(1, deadline - Date.now()))) !== undefined);
    return this.frames;
  }

  /** Frames until one with `event` arrives (inclusive). */
  async until(event: string, timeoutMs = 10_000): Promise<SseFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = await this.next(Math.max(1, deadline - Date.now()));
      if (!frame) throw new Error(`stream ended before a ${event} frame`);
      if (frame.event === event) return frame;
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async read(remainingMs: number): Promise<BodyChunk | 'deadline'> {
    if (remainingMs <= 0) return 'deadline';
    if (!this.pendingRead) {
      this.pendingRead = this.body!.read();
      // Left behind by a deadline and then failed (close() aborts it): nobody else would handle that.
      this.pendingRead.catch(() => undefined);
    }
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      this.pendingRead,
      new Promise<'deadline'>((resolve) => {
        timer = setTimeout(() => resolve('deadline'), remainingMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (outcome !== 'deadline') this.pendingRead = undefined;
    return outcome;
  }

  private take(chunk: BodyChunk): void {
    const text = chunk.done ? this.decoder.decode() : this.decoder.decode(chunk.value, { stream: true });
    this.received += text;
    this.parser.feed(text);
    if (chunk.done) this.ended = true;
  }
}

function toFrame(message: EventSourceMessage): SseFrame {
  return {
    ...(message.id !== undefined ? { id: message.id } : {}),
    ...(message.event !== undefined ? { event: message.event } : {}),
    data: message.data === '' ? undefined : JSON.parse(message.data),
  };
}

export interface SseAnswer {
  status: number;
  contentType: string;
  frames: SseFrame[];
  /** The whole body. */
  text: string;
}

/** Sends the request and reads every frame until the server ends the stream; rejects after `timeoutMs`. */
export async function readSse(url: string, request: SseRequest & { timeoutMs?: number } = {}): Promise<SseAnswer> {
  const reader = await SseReader.open(url, request);
  try {
    const frames = await reader.readToEnd(request.timeoutMs ?? 15_000);
    return { status: reader.status, contentType: reader.headers.get('content-type') ?? '', frames, text: reader.text };
  } finally {
    reader.close();
  }
}
