// The outbound destination policy as pure functions: which hosts, ports and addresses svc may send requests to.
import ipaddr from 'ipaddr.js';

/**
 * One SVC_OUTBOUND_ALLOW entry. A `host` entry names a host as URLs write it (a name or an address), on
 * any port or on one; an address entry also admits that address when a name resolves to it. A `range`
 * entry admits every address of a CIDR range, however it is reached.
 */
export type OutboundAllowEntry = { kind: 'host'; host: string; port?: number } | { kind: 'range'; cidr: string };

export interface OutboundPolicy {
  /** Off (development, test): every destination is allowed. On (production): public addresses and the allow list only. */
  readonly enforced: boolean;
  readonly allow: readonly OutboundAllowEntry[];
}

/** Where a request goes: the host as its URL names it, and the port. */
export interface Destination {
  host: string;
  port: number;
}

const RANGE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  unspecified: 'the unspecified address (it reaches this machine)',
  private: 'a private address',
  linkLocal: 'a link-local address (where cloud metadata services answer)',
  uniqueLocal: 'a unique-local (private IPv6) address',
  deprecatedSiteLocal: 'a site-local (private IPv6) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  ipv4Compatible: 'an IPv4-compatible IPv6 address',
};

/** Lower case, no brackets around IPv6, no trailing dot, IPv6 in its canonical form. */
export function normalizeHost(host: string): string {
  const bare = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.+$/, '');
  return ipaddr.IPv6.isValid(bare) ? ipaddr.IPv6.parse(bare).toString() : bare;
}

/** True for an address as URLs normalise them (dotted-quad IPv4, any IPv6); false for a name. */
export function isIpAddress(host: string): boolean {
  const bare = normalizeHost(host);
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || ipaddr.IPv6.isValid(bare);
}

/** The destination of a URL; its parser already turned every IPv4 spelling (`2130706433`, `0x7f.1`) into dotted-quad. */
export function destinationOf(url: URL): Destination {
  return { host: normalizeHost(url.hostname), port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
}

/**
 * The special-purpose range an address is in (`loopback`, `private`, `linkLocal`...), or undefined for a
 * public one. An IPv4-mapped IPv6 address is judged by its IPv4 address.
 */
export function specialRangeOf(address: string): string | undefined {
  let parsed = ipaddr.parse(normalizeHost(address));
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    // ::a.b.c.d (deprecated IPv4-compatible) is "unicast" to ipaddr.js; never a public destination.
    else if (v6.range() === 'unicast' && v6.parts.slice(0, 6).every((part) => part === 0)) return 'ipv4Compatible';
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

/** `localhost` and `*.localhost` (RFC 6761), in any case, with or without the trailing dot. */
export function isLocalhostName(host: string): boolean {
  const bare = normalizeHost(host);
  return bare === 'localhost' || bare.endsWith('.localhost');
}

/** A host that is this machine: a localhost name or a loopback address. */
export function isLoopbackHost(host: string): boolean {
  return isLocalhostName(host) || (isIpAddress(host) && specialRangeOf(host) === 'loopback');
}

/** True when an allow entry names this host as written (and its port): it may then resolve anywhere. */
export function isAllowedHost(policy: OutboundPolicy, destination: Destination): boolean {
  const host = normalizeHost(destination.host);
  return policy.allow.some((entry) => entry.kind === 'host' && entry.host === host && (entry.port === undefined || entry.port === destination.port));
}

/**
 * Why sending a request to `destination`, which is or resolved to `addresses`, is refused; undefined when
 * it is allowed. Every address must pass: a name that resolves to one public and one private address is refused.
 */
export function destinationRefusal(policy: OutboundPolicy, destination: Destination, addresses: readonly string[]): string | undefined {
  if (!policy.enforced || isAllowedHost(policy, destination)) return undefined;
  // RFC 6761: a localhost name is loopback whatever a resolver answers (or fails to answer) for it.
  const judged = isLocalhostName(destination.host) ? [...addresses, '127.0.0.1'] : addresses;
  for (const address of judged) {
    const range = specialRangeOf(address);
    if (range === undefined || policy.allow.some((entry) => admitsAddress(entry, address, destination.port))) continue;
    const host = normalizeHost(destination.host);
    const resolved = normalizeHost(address);
    const what = host === resolved ? host : `${host} resolves to ${resolved}, which`;
    const description = RANGE_DESCRIPTIONS[range] ?? `a special-purpose address (${range})`;
    return `outbound request to ${hostWithPort(host, destination.port)} refused: ${what} is ${description}; in production svc reaches public addresses only, and what SVC_OUTBOUND_ALLOW names`;
  }
  return undefined;
}

/** Parses SVC_OUTBOUND_ALLOW's entries (`host`, `host:port`, `[v6]:port`, `a.b.c.d/n`, `v6/n`), answering those it cannot read. */
export function parseOutboundAllowList(items: readonly string[]): { allow: OutboundAllowEntry[]; invalid: string[] } {
  const allow: OutboundAllowEntry[] = [];
  const invalid: string[] = [];
  for (const item of items) {
    const entry = parseAllowEntry(item);
    if (entry) allow.push(entry);
    else invalid.push(item);
  }
  return { allow, invalid };
}

function parseAllowEntry(text: string): OutboundAllowEntry | undefined {
  if (text.includes('/')) {
    if (!ipaddr.isValidCIDR(text)) return undefined;
    const [address, prefix] = ipaddr.parseCIDR(text);
    return { kind: 'range', cidr: `${address.toString()}/${prefix}` };
  }
  if (ipaddr.IPv6.isValid(text)) return { kind: 'host', host: normalizeHost(text) };
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(text);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  let host: string;
  try {
    // The URL parser is what every request goes through: an entry is normalised the same way (`0x7f.1` is 127.0.0.1).
    host = normalizeHost(new URL(`http://${match[1]}/`).hostname);
  } catch {
    return undefined;
  }
  if (host === '') return undefined;
  return port === undefined ? { kind: 'host', host } : { kind: 'host', host, port };
}

function admitsAddress(entry: OutboundAllowEntry, address: string, port: number): boolean {
  const parsed = ipaddr.process(normalizeHost(address));
  if (entry.kind === 'range') {
    const range = ipaddr.parseCIDR(entry.cidr);
    return parsed.kind() === range[0].kind() && parsed.match(range);
  }
  return isIpAddress(entry.host) && canonicalAddress(entry.host) === parsed.toString() && (entry.port === undefined || entry.port === port);
}

/** IPv4-mapped IPv6 as its IPv4 address, everything else in canonical form. */
function canonicalAddress(address: string): string {
  return ipaddr.process(normalizeHost(address)).toString();
}

function hostWithPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
