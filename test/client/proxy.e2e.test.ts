// The client tests' cutting proxy: a held event stream relays exactly the frames asked for, even when
// the headers and many frames reach the proxy in one socket read.
import { once } from 'node:events';
import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { RecordingProxy } from './support/proxy.js';

/** Six frames written in the same tick as the headers, so they travel together. */
async function startBurstServer(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let seq = 1; seq <= 6; seq++) res.write(`id: ${seq}\nevent: tick\ndata: {"seq":${seq}}\n\n`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

describe('client tests: the cutting proxy', () => {
  let server: Server;
  let proxy: RecordingProxy;

  before(async () => {
    server = await startBurstServer();
    proxy = await RecordingProxy.start(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    await proxy?.close();
    server?.close();
  });

  it('relays the frames it holds after and nothing more, however they arrived, then drops the connection', async () => {
    for (let round = 0; round < 20; round++) {
      proxy.holdNextEventStream(2);
      const received = await new Promise<string>((resolve, reject) => {
        get(`${proxy.url}/stream`, { headers: { accept: 'text/event-stream' } }, (res) => {
          let text = '';
          let isDropped = false;
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
            if (!isDropped && (text.match(/^id:/gm) ?? []).length >= 2) {
              isDropped = true;
              proxy.dropHeldStream();
            }
          });
          res.on('close', () => resolve(text));
        }).on('error', reject);
      });
      expect(received.match(/^id: \d+/gm), `round ${round}`).to.deep.equal(['id: 1', 'id: 2']);
    }
  });
});
