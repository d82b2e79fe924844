// Listening and graceful shutdown: stop accepting, let in-flight requests finish, then cut.
import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpServer {
  readonly server: Server;
  readonly url: string;
  close(graceMs?: number): Promise<void>;
}

/** An express application: a request listener with the objects its requests and responses inherit from. */
export interface HttpApp extends RequestListener {
  request: object;
  response: object;
}

type MessageClasses = Required<Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'>>;

const messageClasses = new WeakMap<HttpApp, MessageClasses>();

/**
 * Requests and responses are made as instances of classes whose prototypes are the app's own (its
 * request and response methods and `app`), so express's swap of each one's prototype is a no-op. A
 * swapped prototype gives every request and response a V8 hidden class of its own: about 2.3 KB per
 * open connection (idle SSE streams), and property reads no inline cache can share across requests.
 * (A subclass is needed: V8 caches the shape of `new.target` objects only for class constructors.)
 */
function messagesOf(app: HttpApp): MessageClasses {
  const known = messageClasses.get(app);
  if (known) return known;
  class Request extends IncomingMessage {}
  class Response<R extends IncomingMessage = IncomingMessage> extends ServerResponse<R> {}
  for (const [made, key] of [
    [Request, 'request'],
    [Response, 'response'],
  ] as const) {
    Object.setPrototypeOf(made.prototype, Object.getPrototypeOf(app[key]));
    Object.defineProperties(made.prototype, Object.getOwnPropertyDescriptors(app[key]));
    app[key] = made.prototype;
  }
  const classes: MessageClasses = { IncomingMessage: Request, ServerResponse: Response };
  messageClasses.set(app, classes);
  return classes;
}

export async function listen(app: HttpApp, host: string, port: number): Promise<HttpServer> {
  const server = createServer({ keepAliveTimeout: 65_000, ...messagesOf(app) }, app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shownHost}:${address.port}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        // Node keeps a connection alive after a response that finishes during close(): sweep until none is left.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        sweep.unref();
        server.close(() => {
          clearTimeout(force);
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}
