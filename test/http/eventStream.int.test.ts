// An SSE stream over the real app and server: the head carries the API's headers, and once it is
// sent the response keeps no header map, head text or token (idle streams hold only what they need); frames, the close
// when credentials end, and requests built on the app's own prototypes.
import { request, type IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { expect } from 'chai';
import { Router, type Request, type Response } from 'express';
import { createApp } from '../../src/http/app.js';
import { listen, type HttpApp, type HttpServer } from '../../src/http/server.js';
import { openEventStream, type SseStream } from '../../src/http/sse.js';
import type { Principal } from '../../src/kernel/access.js';
import { createLogger } from '../../src/kernel/logger.js';
import { eventually } from '../support/http.js';

interface Opened {
  req: Request;
  res: Response;
  stream: SseStream;
  endCredentials: (reason: string) => void;
}

describe('openEventStream over the app', () => {
  let http: HttpServer;
  const opened: Opened[] = [];

  before(async () => {
    const router = Router();
    router.get('/stream', (req, res) => {
      req.principal = { userId: 'u1', groups: [], scopes: [], isDev: false, jti: 'j1', iat: 1 } as Principal;
      let endCredentials: (reason: string) => void = () => undefined;
      const credentials = { watch: (_principal: Principal, onEnd: (reason: string) => void) => ((endCredentials = onEnd), () => undefined) };
      const stream = openEventStream(req, res, { credentials });
      opened.push({ req, res, stream, endCredentials: (reason) => endCredentials(reason) });
    });
    http = await listen(createApp({ logger: createLogger('silent'), bodyLimitBytes: 1024, routers: [router] }), '127.0.0.1', 0);
  });
  after(async () => {
    await http?.close(100);
  });

  function open(): Promise<{ response: IncomingMessage; text: () => string }> {
    return new Promise((resolve, reject) => {
      const headers = { accept: 'text/event-stream', authorization: 'Bearer a.long.token' };
      const req = request(`${http.url}/stream`, { headers }, (response) => {
        let received = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (received += chunk));
        resolve({ response, text: () => received });
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('sends the API headers in the head, then holds no header map; frames and the close still go out', async () => {
    const { response, text } = await open();
    expect(response.statusCode).to.equal(200);
    expect(response.headers['content-type']).to.equal('text/event-stream; charset=utf-8');
    expect(response.headers['x-accel-buffering']).to.equal('no');
    expect(response.headers['content-security-policy'], 'a security header set before the route').to.be.a('string');
    expect(response.headers['x-request-id']).to.be.a('string');
    const { res, stream, endCredentials } = opened.at(-1)!;
    expect(res.headersSent).to.equal(true);
    expect(res.getHeaderNames(), 'the header map is released once the head is sent').to.deep.equal([]);
    expect(res.getHeader('content-type')).to.equal(undefined);
    // Nor the head's text, nor the caller's token, nor the router's continuation (they would stay for hours).
    expect((res as unknown as { _header: string })._header).not.to.include('text/event-stream');
    const { req } = opened.at(-1)!;
    expect(req.headers.authorization).to.equal(undefined);
    expect(req.rawHeaders.join(' ')).not.to.include('a.long.token');
    expect(req.rawHeaders.map((name) => name.toLowerCase())).to.include('accept');
    expect(req.next).to.equal(undefined);
    stream.send('step', { n: 1 }, 7);
    expect((await eventually(async () => text().includes('id: 7\nevent: step\ndata: {"n":1}\n\n'), 5_000, 5)).ok).to.equal(true);
    const ended = new Promise((resolve) => response.on('end', resolve));
    endCredentials('Session ended');
    await ended;
    expect(text()).to.include(': Session ended\n\n');
    expect(stream.closed).to.equal(true);
  });

  it('builds requests and responses on the app’s own prototypes: they share their V8 hidden class', async () => {
    await open();
    await open();
    await open();
    const [, first, second] = opened.slice(-3);
    // V8's own answer (a swapped prototype gives every object a hidden class of its own).
    setFlagsFromString('--allow-natives-syntax');
    const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
    expect(haveSameMap(first!.req, second!.req), 'requests').to.equal(true);
    expect(haveSameMap(first!.res, second!.res), 'responses').to.equal(true);
    expect(haveSameMap({ a: 1 }, { b: 1 }), 'the check itself').to.equal(false);
    const app = first!.req.app as unknown as HttpApp;
    expect(app.request).to.equal(Object.getPrototypeOf(first!.req));
    expect(app.response).to.equal(Object.getPrototypeOf(first!.res));
    expect(typeof first!.res.json, 'express response methods').to.equal('function');
    for (const { stream } of opened) stream.close();
  });
});
