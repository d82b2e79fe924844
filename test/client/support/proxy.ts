// A loopback HTTP proxy in front of the service: records what the client sends, and can hold an
// event stream after a number of frames and then drop its connection, as a network failure would.
import { createServer, request as forward, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export class RecordingProxy {
  readonly requests: ProxiedRequest[] = [];
  private holdAfterFrames: number | undefined;
  private held: ServerResponse | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Listens on an ephemeral loopback port and forwards everything to `target`. */
  static async start(target: string): Promise<RecordingProxy> {
    const upstream = new URL(target);
    let proxy: RecordingProxy | undefined;
    const server = createServer((req, res) => {
      proxy!.requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers });
      const outgoing = forward(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          const hold = proxy!.takeHold(answer.headers['content-type']);
          if (hold === undefined) {
            answer.pipe(res);
            return;
          }
          proxy!.relayUntilHeld(answer, res, hold);
        },
      );
      outgoing.on('error', () => res.destroy());
      req.pipe(outgoing);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new RecordingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /**
   * The next event-stream answer relays `frames` frames with an id and then nothing more: the
   * connection stays open, silent, until `dropHeldStream`. A test drops it once its client has
   * taken those frames, so what was relayed before the drop is known exactly.
   */
  holdNextEventStream(frames: number): void {
    this.holdAfterFrames = frames;
  }

  /** Destroys the held stream's connection, as a dropped network link would; fails if no stream is held. */
  dropHeldStream(): void {
    if (!this.held) throw new Error('no event stream is held: holdNextEventStream, then let it relay its frames');
    this.held.socket?.destroy();
    this.held = undefined;
  }

  requestsTo(pathPrefix: string): ProxiedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(pathPrefix));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private takeHold(contentType: string | undefined): number | undefined {
    if (this.holdAfterFrames === undefined || !contentType?.startsWith('text/event-stream')) return undefined;
    const frames = this.holdAfterFrames;
    this.holdAfterFrames = undefined;
    return frames;
  }

  /**
   * Relays whole frames up to the `frames`-th one with an id, then holds. The upstream answer is
   * destroyed and nothing it still emits is relayed: one socket read can hold the headers and many
   * frames, and a destroyed stream still emits what it had buffered.
   */
  private relayUntilHeld(answer: IncomingMessage, res: ServerResponse, frames: number): void {
    let pending = '';
    let relayed = 0;
    answer.setEncoding('utf8');
    answer.on('data', (chunk: string) => {
      if (relayed >= frames) return;
      pending += chunk;
      for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
        const frame = pending.slice(0, end + 2);
        pending = pending.slice(end + 2);
        res.write(frame);
        if (/^id:/m.test(frame) && ++relayed >= frames) {
          answer.destroy();
          this.held = res;
          return;
        }
      }
    });
    answer.on('end', () => res.end(pending));
  }
}
