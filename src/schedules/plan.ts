// What the ticker does with a due schedule, one step at a time (pure): fire its due tick, or skip ahead.
import { CATCHUP_ALL_LIMIT, nextTick, ticksBefore, type ScheduleDefinition } from '../workflows/schedules.js';

export type TickStep = { kind: 'fire'; scheduledAt: Date; next: Date | null } | { kind: 'skip'; from: Date; reason: 'catchup' | 'overlap'; next: Date | null };

export interface DueSchedule {
  definition: Pick<ScheduleDefinition, 'cron' | 'timezone' | 'overlap' | 'catchup'>;
  /** The schedule's next_fire_at, at or before `now`. */
  due: Date;
  /** A tick older than this (now minus the on-time window) was missed: no worker ran at its moment. */
  lateBefore: Date;
  /** The schedule's last run has not ended yet. */
  isPreviousRunning: boolean;
}

/**
 * A tick on time always fires (overlap permitting). Missed ticks follow `catchup`: `none` skips them
 * all, `latest` skips to the latest of them, `all` to the 100th latest; the next step fires it.
 */
export function planTick({ definition, due, lateBefore, isPreviousRunning }: DueSchedule): TickStep {
  const { cron, timezone, catchup } = definition;
  if (due < lateBefore && catchup !== 'all' && catchup !== 'latest') {
    return { kind: 'skip', from: due, reason: 'catchup', next: nextTick(cron, timezone, new Date(lateBefore.getTime() - 1)) };
  }
  if (due < lateBefore) {
    const [oldestKept] = ticksBefore(cron, timezone, lateBefore, catchup === 'all' ? CATCHUP_ALL_LIMIT : 1);
    if (oldestKept && oldestKept > due) return { kind: 'skip', from: due, reason: 'catchup', next: oldestKept };
  }
  const next = nextTick(cron, timezone, due);
  if (definition.overlap === 'skip' && isPreviousRunning) return { kind: 'skip', from: due, reason: 'overlap', next };
  return { kind: 'fire', scheduledAt: due, next };
}
