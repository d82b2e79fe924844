// A loopback HTTP proxy in front of the service: records what the client sends, and can cut an
// event stream after a number of frames, as a dropped connection would.
import { createServer, request as forward, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export class RecordingProxy {
  readonly requests: ProxiedRequest[] = [];
  private cutAfterFrames: number | undefined;

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
          const cut = proxy!.takeCut(answer.headers['content-type']);
          if (cut === undefined) {
            answer.pipe(res);
            return;
          }
          proxy!.relayUntilCut(answer, res, cut);
        },
      );
      outgoing.on('error', () => res.destroy());
      req.pipe(outgoing);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new RecordingProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /** The next event-stream answer is cut (socket destroyed) once it has relayed `frames` frames with an id. */
  cutNextEventStream(frames: number): void {
    this.cutAfterFrames = frames;
  }

  requestsTo(pathPrefix: string): ProxiedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(pathPrefix));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private takeCut(contentType: string | undefined): number | undefined {
    if (this.cutAfterFrames === undefined || !contentType?.startsWith('text/event-stream')) return undefined;
    const frames = this.cutAfterFrames;
    this.cutAfterFrames = undefined;
    return frames;
  }

  private relayUntilCut(answer: NodeJS.ReadableStream & { destroy(): void }, res: import('node:http').ServerResponse, frames: number): void {
    let pending = '';
    let relayed = 0;
    answer.setEncoding('utf8');
    answer.on('data', (chunk: string) => {
      pending += chunk;
      for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
        const frame = pending.slice(0, end + 2);
        pending = pending.slice(end + 2);
        if (/^id:/m.test(frame) && ++relayed >= frames) {
          // Drop the connection once the last relayed frame has left, without ending the response.
          answer.destroy();
          res.write(frame, () => res.socket?.destroy());
          return;
        }
        res.write(frame);
      }
    });
    answer.on('end', () => res.end(pending));
  }
}
