// Admission under spec.concurrency, pure: whether a run takes a slot now, waits in the queue, or (a new
// run of a workflow that rejects) is refused. The counts come from the read model, read under the
// (workflow, key) lock, so two admissions never decide on the same free slot.
import { ConcurrencyLimitError } from '../../kernel/errors.js';
import type { ConcurrencyDefinition } from '../../workflows/concurrency.js';
import { runEvent, type RunEvent } from '../events.js';

export interface AdmitRun {
  workflow: string;
  policy: ConcurrencyDefinition;
  /** The run's key value under the policy ('' without a key). */
  key: string;
  /** Runs of the workflow and key holding a slot now (this run not counted). */
  holders: number;
  /** Runs of the workflow and key waiting for a slot that arrived before this one. */
  waitingAhead: number;
  /** A start that may be refused (run_started is in the same commit, not a schedule's tick): a run that already exists queues. */
  isNew: boolean;
  /** The run waits for a slot already (run_queued is journaled). */
  isWaiting: boolean;
}

/**
 * run_dequeued when a slot is free and nobody who came earlier waits for one (arrival order, also for
 * a run that waited for a person or a time: it keeps its place ahead of later arrivals); otherwise
 * run_queued, nothing when the run is queued already, or ConcurrencyLimitError for a new run of a
 * workflow with `on_limit: reject`.
 */
export function decideAdmission(run: AdmitRun): RunEvent[] {
  const { policy, key } = run;
  if (run.holders < policy.limit && run.waitingAhead === 0) return [runEvent('run_dequeued', { key })];
  if (run.isWaiting) return [];
  if (run.isNew && policy.onLimit === 'reject') throw new ConcurrencyLimitError(run.workflow, key, policy.limit);
  return [runEvent('run_queued', { key, limit: policy.limit })];
}

/** How many waiting runs a pass may dequeue: the free slots (none while earlier admissions fill the limit). */
export function freeSlots(limit: number, holders: number): number {
  return Math.max(0, limit - holders);
}
