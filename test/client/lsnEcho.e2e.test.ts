// The client sends back the highest X-Svc-Lsn any answer carried (a read replica's read-your-writes),
// against a loopback server that stamps answers as it is told and records what each request sent.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { SvcClient } from '../../src/client/index.js';

describe('SvcClient and X-Svc-Lsn', () => {
  let server: Server;
  let baseUrl: string;
  const seen: IncomingHttpHeaders[] = [];
  /** The X-Svc-Lsn the next answers carry (none when undefined). */
  let stamp: string | undefined;

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      if (stamp !== undefined) res.setHeader('X-Svc-Lsn', stamp);
      res.setHeader('content-type', 'application/json');
      res.end(req.method === 'GET' ? '[]' : '{"id":"x"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('echoes the highest LSN received, compared as numbers, and ignores malformed ones', async () => {
    const client = new SvcClient({ baseUrl, token: 't' });
    const sent = async (call: () => Promise<unknown>) => {
      await call();
      return seen.at(-1)!['x-svc-lsn'];
    };
    const list = () => client.crud('item').list();
    expect(await sent(list), 'nothing received yet').to.equal(undefined);
    stamp = '10/0';
    await client.crud('item').create({});
    stamp = undefined;
    expect(await sent(list)).to.equal('10/0');
    // Lower (as a number; higher as text) and malformed values are not taken.
    for (const lower of ['A/0', 'garbage', '']) {
      stamp = lower;
      await client.crud('item').create({});
    }
    stamp = undefined;
    expect(await sent(list)).to.equal('10/0');
    stamp = '11/0';
    await client.crud('item').create({});
    stamp = undefined;
    expect(await sent(list)).to.equal('11/0');
    expect(await sent(() => client.runs.list())).to.equal('11/0');
  });
});
