// The one way svc sends HTTP requests out: undici's fetch through a dispatcher that checks every new
// connection against the destination policy. The check runs when the connection opens, so every
// redirect hop is checked, and a name is resolved once, checked, and connected to at exactly the
// addresses checked, so DNS rebinding cannot slip a private address in between.
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { OutboundRefusedError } from '../kernel/errors.js';
import type { Logger } from '../kernel/logger.js';
import { tracingEnabled } from '../tracing/tracer.js';
import { causesOf, loggableUrl, tlsFailureIn } from './failure.js';
import { tracedFetch } from './fetchTracing.js';
import { destinationOf, destinationRefusal, isAllowedHost, isIpAddress, isLocalhostName, type Destination, type OutboundPolicy } from './policy.js';

/** A WHATWG fetch, as the SDKs svc uses take one (openai, the MCP SDK, oauth4webapi, jose). */
export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Every address a name resolves to (dns.lookup with `all`: /etc/hosts included). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface Outbound {
  readonly fetch: OutboundFetch;
  /** Why a request to this URL would be refused now (its name resolved), or undefined: for checking configuration as it is saved. */
  refusalOf(url: string): Promise<string | undefined>;
  close(): Promise<void>;
}

export interface OutboundOptions {
  /** How names are resolved (dns.lookup by default). */
  resolve?: Resolver;
  /** Where a request refused by TLS is logged (a security control failure, ASVS 16.3.4). */
  logger?: Logger;
}

const resolveAll: Resolver = (hostname) => lookup(hostname, { all: true });

/**
 * The guarded fetch for a policy.
 * @example
 * const outbound = createOutbound({ enforced: true, allow: [] });
 * await outbound.fetch('http://127.0.0.1:8000/health'); // rejects with OutboundRefusedError
 */
export function createOutbound(policy: OutboundPolicy, { resolve = resolveAll, logger }: OutboundOptions = {}): Outbound {
  const direct = buildConnector({});
  const agent = new Agent({
    connect: (options, callback) => {
      const destination = { host: options.hostname, port: Number(options.port) || (options.protocol === 'https:' ? 443 : 80) };
      admit(policy, destination, resolve).then(
        (pinned) => (pinned ? buildConnector({ lookup: pinnedLookup(pinned) }) : direct)(options, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
  const send = async (url: string | URL, options: RequestInit | undefined): Promise<Response> => {
    try {
      // undici's fetch is the one Node bundles, in the version this project installs: the same WHATWG
      // shapes under different TypeScript declarations, hence the casts.
      return (await undiciFetch(url, { ...(options as object), dispatcher: agent })) as unknown as Response;
    } catch (error) {
      const refusal = outboundRefusalIn(error);
      if (refusal) throw refusal;
      const tls = tlsFailureIn(error);
      if (tls) logger?.warn({ url: loggableUrl(url), method: options?.method ?? 'GET', ...tls }, 'outbound request failed on TLS');
      throw error;
    }
  };
  const guardedFetch: OutboundFetch = (input, init) => {
    const [url, options] = urlAndInit(input, init);
    return tracingEnabled() ? tracedFetch(url, options, send) : send(url, options);
  };
  return {
    fetch: guardedFetch,
    async refusalOf(url) {
      try {
        await admit(policy, destinationOf(new URL(url)), resolve);
        return undefined;
      } catch (error) {
        // A name that does not resolve now is judged again when svc connects.
        return error instanceof OutboundRefusedError ? error.message : undefined;
      }
    },
    close: () => agent.close(),
  };
}

/** The policy's refusal behind an error an SDK wrapped (fetch's "fetch failed", openai's "Connection error."). */
export function outboundRefusalIn(error: unknown): OutboundRefusedError | undefined {
  for (const cause of causesOf(error)) if (cause instanceof OutboundRefusedError) return cause;
  return undefined;
}

/** A Request of Node's own fetch is not an instance of this undici's class: it travels as its URL and fields. */
function urlAndInit(input: string | URL | Request, init: RequestInit | undefined): [string | URL, RequestInit | undefined] {
  if (!(input instanceof Request)) return [input, init];
  const { method, headers, body, signal, redirect } = input;
  return [input.url, { method, headers, body, signal, redirect, duplex: 'half', ...init } as RequestInit];
}

/**
 * Resolves to the addresses a connection must use (a name's, checked), or undefined when the host may be
 * reached as is (policy off, named by the allow list, or an allowed literal address); rejects when refused.
 */
async function admit(policy: OutboundPolicy, destination: Destination, resolve: Resolver): Promise<LookupAddress[] | undefined> {
  if (!policy.enforced || isAllowedHost(policy, destination)) return undefined;
  const literal = isIpAddress(destination.host);
  // A localhost name that does not resolve is still judged (as loopback), not waved through to a DNS error.
  const resolved = literal
    ? undefined
    : await resolve(destination.host).catch((error: unknown) => (isLocalhostName(destination.host) ? [] : Promise.reject(error)));
  const refusal = destinationRefusal(policy, destination, resolved ? resolved.map((a) => a.address) : [destination.host]);
  if (refusal) throw new OutboundRefusedError(refusal, { host: destination.host, port: destination.port });
  return resolved;
}

/** A lookup that answers the addresses already checked, so the connection cannot resolve the name to others. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (hostname, options, callback) => {
    const usable = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const first = usable[0];
    if (!first) callback(Object.assign(new Error(`${hostname} has no IPv${String(options.family)} address`), { code: 'ENOTFOUND' }), '', 0);
    else if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}
