// The tests' SSE reader against a loopback server that writes exactly what each test says, when it says.
import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { readSse, SseReader } from './sse.js';

describe('test support: the SSE reader', () => {
  let server: Server;
  let url: string;
  /** The open event-stream answer of the current test, to write into. */
  let stream: Promise<ServerResponse>;

  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/json') {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"UNAUTHENTICATED"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      server.emit('stream', res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    stream = once(server, 'stream').then(([res]) => res as ServerResponse);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads ids, event names, JSON data (also over several lines and split chunks) and comments', async () => {
    const reader = await SseReader.open(`${url}/stream`, { token: 't' });
    const res = await stream;
    res.write(': ping\n\nid: 1\nevent: first\ndata: {"a":');
    res.write('1}\n\nid: 2\nevent: second\ndata: {"b":\ndata: [1,2]}\n\n');
    res.end(': closed by the server\n\n');
    expect(await reader.readToEnd()).to.deep.equal([
      { id: '1', event: 'first', data: { a: 1 } },
      { id: '2', event: 'second', data: { b: [1, 2] } },
    ]);
    expect(reader.comments).to.deep.equal(['ping', 'closed by the server']);
    expect(reader.isEnded).to.equal(true);
    expect(reader.text).to.include('id: 2\nevent: second');
  });

  it('rejects a read past its deadline, and the frame that comes later is the next one read', async () => {
    const reader = await SseReader.open(`${url}/stream`);
    const res = await stream;
    let error: unknown;
    await reader.next(50).catch((e: unknown) => (error = e));
    expect(String(error)).to.match(/no SSE frame within 50 ms/);
    res.write('id: 7\nevent: late\ndata: {"late":true}\n\n');
    expect(await reader.next()).to.deep.equal({ id: '7', event: 'late', data: { late: true } });
    res.end('event: skipped\ndata: 1\n\nevent: last\ndata: 2\n\n');
    expect(await reader.until('last')).to.deep.equal({ event: 'last', data: 2 });
    expect(reader.frames.map((f) => f.event)).to.deep.equal(['late', 'skipped', 'last']);
    expect(await reader.next()).to.equal(undefined);
  });

  it('reads an answer that is no event stream whole: its status and text, no frames', async () => {
    const answer = await readSse(`${url}/json`);
    expect(answer).to.deep.include({ status: 401, contentType: 'application/json', frames: [], text: '{"code":"UNAUTHENTICATED"}' });
  });
});
