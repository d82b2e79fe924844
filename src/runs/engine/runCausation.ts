// Who the engine's events of a run name: the run's principal, through the executor.
import { actorOfUserId, ANONYMOUS, currentCausation, type Causation } from '../../kernel/causation.js';
import type { RunState } from '../state.js';

/**
 * A run's principal as the cause of its engine events (a scheduled run has none: its schedule), in the
 * request that started or resumed it, if one did.
 */
export function executorCausation(run: RunState): Causation {
  const schedule = run.trigger?.type === 'schedule' ? `${run.workflow}/${run.trigger.schedule_id}` : undefined;
  const actor = run.principal ? actorOfUserId(run.principal.user_id) : schedule ? { type: 'schedule' as const, id: schedule } : ANONYMOUS;
  return { actor, source: 'executor', requestId: currentCausation().requestId, tenant: run.principal?.tenant ?? undefined };
}
