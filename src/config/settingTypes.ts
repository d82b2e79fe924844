// The kinds of value a setting holds, as zod schemas over the raw text of one environment variable.
// An invalid value adds an issue and still answers a value (the default, or the raw text where the
// rules between settings need it), so those rules run too and every problem is reported at once.
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
