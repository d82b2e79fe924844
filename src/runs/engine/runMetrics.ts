// What the run engine counts once a commit of this process is journaled: the steps that finished
// (with the duration their events record) and the run's end.
import { runsTotal, stepDuration } from '../../metrics/registry.js';
import { TERMINAL_EVENT_TYPES, type RecordedRunEvent } from '../events.js';
import type { RunState } from '../state.js';

/** `journaled`: the events one commit appended to the run's stream; `after`: the run as folded with them. */
export function countJournaled(after: RunState, journaled: readonly RecordedRunEvent[]): void {
  for (const event of journaled) {
    if (event.type === 'step_completed' || event.type === 'step_failed') {
      // prom-client throws on a value that is no number: counting must never fail a journaled commit.
      const seconds = event.data.payload.duration_ms / 1000;
      if (Number.isFinite(seconds)) stepDuration.observe({ workflow: after.workflow, kind: event.data.engine }, seconds);
    } else if (TERMINAL_EVENT_TYPES.includes(event.type)) {
      runsTotal.inc({ workflow: after.workflow, status: after.status });
    }
  }
}
