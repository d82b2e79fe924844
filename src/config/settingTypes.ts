// The kinds of value a setting holds, as zod schemas over the raw text of one environment variable.
// An invalid value adds an issue and still answers a value (the default, or the raw text where the
// rules between settings need it), so those rules run too and every problem is reported at once.
import { isIP } from 'node:net';
import { z } from 'zod';

/** An empty variable is an unset one. */
const unsetIfEmpty = (value: unknown) => (value === '' ? undefined : value);
const raw = z.preprocess(unsetIfEmpty, z.string().optional());
type Context = z.core.$RefinementCtx;

function refuse(context: Context, message: string): void {
  // A continuable issue: the other settings, and the rules between them, are still read.
  context.addIssue({ code: 'custom', message, continue: true });
}

export const textOr = (fallback: string) => raw.transform((value) => value ?? fallback);
/** Text with no default: unset (or empty) stays undefined. */
export const optionalText = () => raw;

export function integer(fallback: number, min: number, max: number) {
  return raw.transform((value, context) => {
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (/^-?\d+$/.test(value.trim()) && parsed >= min && parsed <= max) return parsed;
    refuse(context, `must be an integer from ${min} to ${max} (got "${value}")`);
    return fallback;
  });
}

export function flag(fallback: boolean) {
  return raw.transform((value, context) => {
    const lowered = value?.toLowerCase();
    if (lowered === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(lowered)) return true;
    if (['0', 'false', 'no', 'off'].includes(lowered)) return false;
    refuse(context, `must be true or false (got "${lowered}")`);
    return fallback;
  });
}

export function oneOf<const T extends string>(allowed: readonly T[], fallback: T) {
  return raw.transform((value, context): T => {
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    refuse(context, `must be one of ${allowed.join(', ')} (got "${value}")`);
    return fallback;
  });
}

/** A comma list; unset is `undefined` (a given list may still be empty: ","). */
export const list = () =>
  raw.transform((value) =>
    value
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

export const listOr = (fallback: readonly string[]) => list().transform((items) => items ?? [...fallback]);

export function url(protocols: readonly string[]) {
  return raw.transform((value, context) => {
    if (value === undefined) return undefined;
    if (URL.canParse(value) && protocols.includes(new URL(value).protocol)) return value;
    refuse(context, `must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL`);
    return undefined;
  });
}

/**
 * Text that must match `pattern`; an invalid value is still answered, so a rule that asks for the
 * setting does not also call it missing.
 */
export function matching(pattern: RegExp, message: string, options: { emptyIsUnset: boolean }) {
  // Unlike the other kinds, a signing key set to "" is refused, not read as unset: a deployment
  // that meant to set one must not start with an ephemeral key.
  const input = options.emptyIsUnset ? raw : z.string().optional();
  return input.transform((value, context) => {
    if (value !== undefined && !pattern.test(value)) refuse(context, message);
    return value;
  });
}

/** Express's `trust proxy`: which peers may say, in X-Forwarded-For, whose request it is. */
export type TrustProxy = boolean | number | readonly string[];

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** An address or a CIDR range (`10.0.0.0/8`, `fd00::/8`), or one of Express's names for ranges. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.includes(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** Unset or false: trust no proxy; true: any; a number: that many hops; else a comma list of proxies. */
export function trustProxy() {
  return raw.transform((value, context): TrustProxy => {
    const lowered = value?.trim().toLowerCase();
    if (lowered === undefined || lowered === 'false') return false;
    if (lowered === 'true') return true;
    if (/^\d{1,2}$/.test(lowered)) return Number(lowered);
    const entries = lowered
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    const invalid = entries.filter((entry) => !isProxyEntry(entry));
    if (invalid.length === 0 && entries.length > 0) return entries;
    refuse(
      context,
      `must be true, false, a hop count, or a comma list of addresses, CIDR ranges, loopback, linklocal, uniquelocal (cannot read: ${invalid.join(', ') || value})`,
    );
    return false;
  });
}

/**
 * OTLP export headers as OpenTelemetry writes them: `key=value` pairs, comma-separated, values
 * percent-encoded (`Authorization=Bearer%20abc`).
 */
export function otlpHeaders() {
  return list().transform((items, context) => {
    const headers: Record<string, string> = {};
    for (const item of items ?? []) {
      const at = item.indexOf('=');
      const key = item.slice(0, at).trim();
      if (at <= 0 || key === '') {
        refuse(context, `must be key=value pairs separated by commas (cannot read "${item}")`);
        continue;
      }
      headers[key] = decodeOrRaw(item.slice(at + 1).trim());
    }
    return headers;
  });
}

function decodeOrRaw(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
