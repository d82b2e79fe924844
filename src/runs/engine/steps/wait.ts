// A Wait step (pure): when its timer fires (`duration` from now, or the `until` date-time the context
// names), or the error a bad date is.
import type { JsonObject } from '../../../kernel/json.js';
import type { StepDefinition } from '../../../workflows/definition.js';
import { parseDateTime, parseDuration } from '../../../workflows/durations.js';
import { render } from '../../../workflows/template.js';
import { errorOutcome, type StepOutcome } from './types.js';

/** The timer's time as ISO text; a past `until` is kept as written (the timer fires at once). */
export function waitFiresAt(step: StepDefinition, context: JsonObject, now: Date): { firesAt: string } | { failed: StepOutcome } {
  if (step.config.duration !== undefined) {
    const ms = parseDuration(step.config.duration);
    if (ms === null)
      return { failed: errorOutcome(`duration ${JSON.stringify(step.config.duration)} is not a duration`, { step: step.id, name: 'InvalidDuration' }) };
    return { firesAt: new Date(now.getTime() + ms).toISOString() };
  }
  const until = render(step.config.until ?? null, context);
  const at = parseDateTime(until);
  if (at === null) {
    return { failed: errorOutcome(`until ${JSON.stringify(until)} is not an ISO 8601 date-time with an offset`, { step: step.id, name: 'InvalidDate' }) };
  }
  return { firesAt: new Date(at).toISOString() };
}
