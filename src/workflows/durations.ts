// Durations as workflows write them (`500ms`, `10s`, `5m`, `2h`, `1d`): the one parser the validator and the engine share.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;
/** Longer than any wait a run should hold (about 10 years): beyond it a typo, not an intent. */
export const MAX_DURATION_MS = 3650 * UNIT_MS.d!;

/**
 * Milliseconds of a duration (a non-negative number with one unit suffix), or null when the value is
 * not one. A bare number is refused: `5` could mean seconds or milliseconds.
 *
 * @example parseDuration('1.5s') // 1500
 */
export function parseDuration(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const match = DURATION.exec(value.trim());
  if (!match) return null;
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : null;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Epoch milliseconds of an ISO 8601 date-time with its offset (`2030-01-01T09:00:00Z`,
 * `...+02:00`), or null: a time without an offset would depend on the server's zone.
 */
export function parseDateTime(value: unknown): number | null {
  if (typeof value !== 'string' || !DATE_TIME.test(value.trim())) return null;
  const ms = Date.parse(value.trim());
  return Number.isFinite(ms) ? ms : null;
}
