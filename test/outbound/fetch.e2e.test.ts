// The guarded fetch over real loopback HTTP: a name is resolved once, checked, and connected to at the
// checked addresses (DNS rebinding cannot pass); redirects are checked per hop; development lets all through.
import { expect } from 'chai';
import type { LookupAddress } from 'node:dns';
import { OutboundRefusedError } from '../../src/kernel/errors.js';
import { createOutbound, type Outbound, type Resolver } from '../../src/outbound/fetch.js';
import { parseOutboundAllowList } from '../../src/outbound/policy.js';
import { freePort } from '../support/db.js';
import { FakeServer, sendJson } from '../workflows/helpers.js';

/** A resolver that knows only the names given (the real one is never asked), recording each question. */
function fixedResolver(names: Record<string, string[]>, asked: string[] = []): Resolver {
  return async (hostname) => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  return expect.fail('expected a rejection');
}

describe('the guarded outbound fetch', () => {
  const server = new FakeServer();
  const outbounds: Outbound[] = [];
  let port: number;
  const make = (allow: string[], resolver?: Resolver, enforced = true) => {
    const outbound = createOutbound({ enforced, allow: parseOutboundAllowList(allow).allow }, { resolve: resolver });
    outbounds.push(outbound);
    return outbound;
  };

  before(async () => {
    await server.start();
    port = Number(new URL(server.url).port);
    server.on('/ok', (_req, res) => sendJson(res, 200, { ok: true }));
    server.on('/hop', (req, res) => {
      res.writeHead(302, { location: new URL(req.url, 'http://x').searchParams.get('to')! }).end();
    });
  });
  after(async () => {
    for (const outbound of outbounds) await outbound.close();
    await server.stop();
  });

  it('refuses with an OutboundRefusedError naming the host and why, before any byte leaves', async () => {
    const before = server.requests.length;
    const error = await rejection(make([]).fetch(`${server.url}/ok`));
    expect(error).to.be.instanceOf(OutboundRefusedError);
    expect(error.message).to.match(new RegExp(`127\\.0\\.0\\.1:${port} refused: 127\\.0\\.0\\.1 is a loopback address`));
    expect(server.requests.length).to.equal(before);
  });

  it('a name resolving to a public and a loopback address is refused as a whole', async () => {
    const outbound = make([], fixedResolver({ 'rebind.test': ['93.184.216.34', '127.0.0.1'] }));
    const error = await rejection(outbound.fetch(`http://rebind.test:${port}/ok`));
    expect(error).to.be.instanceOf(OutboundRefusedError);
    expect(error.message).to.match(/rebind\.test resolves to 127\.0\.0\.1, which is a loopback address/);
  });

  it('refuses a localhost name the resolver does not know, rather than failing on DNS', async () => {
    const error = await rejection(make([], fixedResolver({})).fetch(`http://app.localhost:${port}/ok`));
    expect(error).to.be.instanceOf(OutboundRefusedError);
    expect(error.message).to.match(/app\.localhost:\d+ refused: .*loopback/);
  });

  it('connects to exactly the addresses it checked: the name is resolved once per connection, by the checker', async () => {
    const asked: string[] = [];
    // Only the checker's resolver knows this name: the connection succeeds only if it uses the checked address.
    const outbound = make(['127.0.0.0/8'], fixedResolver({ 'pinned.test': ['127.0.0.1'] }, asked));
    const response = await outbound.fetch(`http://pinned.test:${port}/ok`);
    expect(response.status).to.equal(200);
    expect(await response.json()).to.deep.equal({ ok: true });
    expect(asked).to.deep.equal(['pinned.test']);
  });

  it('checks every redirect hop: an allowed host cannot hand the request on to a refused one', async () => {
    const closedPort = await freePort();
    const outbound = make([`127.0.0.1:${port}`], fixedResolver({ 'elsewhere.test': ['10.9.8.7'], localhost: ['127.0.0.1'] }));
    const allowed = await outbound.fetch(`${server.url}/hop?to=${encodeURIComponent(`${server.url}/ok`)}`);
    expect(allowed.status).to.equal(200);
    for (const [to, reason] of [
      // The allowed entry is 127.0.0.1 on this port only: the same address on another port is refused.
      [`http://localhost:${closedPort}/ok`, new RegExp(`localhost:${closedPort} refused: localhost resolves to 127\\.0\\.0\\.1, which is a loopback address`)],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
      ['http://elsewhere.test/', /elsewhere\.test resolves to 10\.9\.8\.7, which is a private address/],
    ] as [string, RegExp][]) {
      const error = await rejection(outbound.fetch(`${server.url}/hop?to=${encodeURIComponent(to)}`));
      expect(error, to).to.be.instanceOf(OutboundRefusedError);
      expect(error.message, to).to.match(reason);
    }
  });

  it('refusalOf judges a URL as a request would be judged, names resolved; an unresolvable name is left to connect time', async () => {
    const outbound = make(
      ['allowed.test:443'],
      fixedResolver({ 'internal.test': ['192.168.4.4'], 'public.test': ['93.184.216.34'], 'allowed.test': ['10.0.0.1'] }),
    );
    expect(await outbound.refusalOf('https://internal.test/token')).to.match(/internal\.test resolves to 192\.168\.4\.4, which is a private address/);
    expect(await outbound.refusalOf('https://169.254.169.254/')).to.match(/link-local/);
    expect(await outbound.refusalOf('https://public.test/token')).to.equal(undefined);
    expect(await outbound.refusalOf('https://allowed.test/token')).to.equal(undefined);
    expect(await outbound.refusalOf('https://allowed.test:8443/token')).to.match(/private/);
    expect(await outbound.refusalOf('https://unknown.test/token')).to.equal(undefined);
  });

  it('takes a Request as the SDKs may pass one: sent with its method, headers and body, and judged the same', async () => {
    const request = () => new Request(`${server.url}/ok`, { method: 'POST', headers: { 'x-probe': 'request' }, body: 'payload' });
    const before = server.requests.length;
    expect(await rejection(make([]).fetch(request()))).to.be.instanceOf(OutboundRefusedError);
    expect(server.requests.length).to.equal(before);
    const response = await make([`127.0.0.1:${port}`]).fetch(request());
    expect(response.status).to.equal(200);
    expect(server.requests.at(-1)).to.deep.include({ method: 'POST', body: 'payload' });
    expect(server.requests.at(-1)!.headers['x-probe']).to.equal('request');
  });

  it('in development lets everything through', async () => {
    const response = await make([], undefined, false).fetch(`${server.url}/ok`);
    expect(response.status).to.equal(200);
  });

  it("a timeout is the caller's TimeoutError, a closed port a plain network error: only the policy raises OutboundRefusedError", async () => {
    server.on('/hang', () => undefined);
    const outbound = make([`127.0.0.1`]);
    const timeout = await rejection(outbound.fetch(`${server.url}/hang`, { signal: AbortSignal.timeout(100) }));
    expect(timeout.name).to.equal('TimeoutError');
    const closed = await rejection(outbound.fetch(`http://127.0.0.1:${await freePort()}/`));
    expect(closed).to.not.be.instanceOf(OutboundRefusedError);
    expect(closed).to.be.instanceOf(TypeError);
  });
});
