// Admission under spec.concurrency, at the database: a run takes a slot (run_dequeued) or joins the
// queue (run_queued) in the commit of its own append, under the (workflow, key) lock; and a pass, run
// by every worker's claim loop, dequeues waiting runs in arrival order as slots free.
import type { EventStore } from '../../eventstore/store.js';
import type { EventTransaction } from '../../eventstore/transaction.js';
import { concurrencyKeyOf, type ConcurrencyDefinition } from '../../workflows/concurrency.js';
import type { WorkflowRegistry } from '../../workflows/registry.js';
import { runEvent, runStream, type RunEvent } from '../events.js';
import type { RunState } from '../state.js';
import { decideAdmission, freeSlots } from './decide.js';
import { countHolders, countWaitingAhead, lockSlots, selectQueueHead, selectWaitingGroups, type WaitingGroup } from './slots.js';

/** Groups one dequeue pass looks at; more wait for the next pass. */
const GROUPS_PER_PASS = 50;
/** No run has this id: counts every holder. */
const NO_RUN = '00000000-0000-0000-0000-000000000000';

/**
 * The work of a run's admission inside the transaction of its append: run_dequeued or run_queued
 * (ConcurrencyLimitError for a refused start rolls the append back: nothing was started).
 */
export function admissionOf(run: RunState, policy: ConcurrencyDefinition, isNew: boolean): (tx: EventTransaction) => Promise<RunEvent[]> {
  return async (tx) => {
    const key = concurrencyKeyOf(policy, run.input);
    await lockSlots(tx.client, run.workflow, key);
    const holders = await countHolders(tx.client, run.workflow, key, run.runId);
    const waitingAhead = await countWaitingAhead(tx.client, run.workflow, key, run.runId, isNew ? null : run.createdAt);
    // A schedule's tick must start exactly once: it queues rather than being refused (overlap: skip passes ticks over).
    const isRefusable = isNew && run.trigger?.type !== 'schedule';
    return decideAdmission({ workflow: run.workflow, policy, key, holders, waitingAhead, isNew: isRefusable, isWaiting: run.slot?.state === 'waiting' });
  };
}

/**
 * Dequeues waiting runs while their limits have room, at most `room` of them, oldest first per
 * (workflow, key): answers the runs now holding a slot, for the caller to resume (any worker may).
 */
export async function dequeueWaiting(store: EventStore, workflows: WorkflowRegistry, room: number): Promise<string[]> {
  if (room <= 0) return [];
  const admitted: string[] = [];
  for (const group of await selectWaitingGroups(store.pool, GROUPS_PER_PASS)) {
    if (admitted.length >= room) break;
    const definition = workflows.find(group.workflow, group.schemaVersion);
    // A version not loaded here is left to a worker that has it (a rolling deploy).
    if (!definition) continue;
    admitted.push(...(await dequeueGroup(store, group, definition.concurrency, room - admitted.length)));
  }
  return admitted;
}

async function dequeueGroup(store: EventStore, group: WaitingGroup, policy: ConcurrencyDefinition | null, room: number): Promise<string[]> {
  const { workflow, key } = group;
  return store.transact(async (tx) => {
    await lockSlots(tx.client, workflow, key);
    // A definition that dropped its limit lets its queue go.
    const free = policy ? freeSlots(policy.limit, await countHolders(tx.client, workflow, key, NO_RUN)) : room;
    if (free === 0) return [];
    const head = await selectQueueHead(tx.client, workflow, key, Math.min(free, room));
    if (head.length === 0) return [];
    // A run aborted meanwhile is a conflict, left out; the others commit.
    const outcomes = await tx.appendEach(
      head.map((run) => ({ streamId: runStream(run.id), expectedVersion: run.version, events: [runEvent('run_dequeued', { key })] })),
    );
    return head.filter((_, index) => !('conflict' in outcomes[index]!)).map((run) => run.id);
  });
}
