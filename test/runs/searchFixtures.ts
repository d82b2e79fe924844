// Runs made fast for search tests: run_started and the run's end appended straight to the event store
// (the read model is the real projection); ended runs, so no executor picks them up.
import { randomUUID } from 'node:crypto';
import type { EventStore } from '../../src/eventstore/store.js';
import { runEvent, runStream, type RunEvent } from '../../src/runs/events.js';

export interface RunSpec {
  userId: string;
  tenant?: string | null;
  workflow?: string;
  status?: 'completed' | 'failed' | 'aborted';
  parentRunId?: string;
  /** When the run started (its created_at); default: the append's time. */
  at?: string;
}

function eventsOf(id: string, spec: RunSpec): RunEvent[] {
  const principal = { user_id: spec.userId, groups: [], scopes: [], tenant: spec.tenant ?? null };
  const started = runEvent('run_started', {
    run_id: id,
    workflow: spec.workflow ?? 'alpha',
    schema_version: 'v1',
    input: {},
    principal,
    trigger: 'test',
    ...(spec.parentRunId ? { parent_run_id: spec.parentRunId } : {}),
  });
  const status = spec.status ?? 'completed';
  const ended =
    status === 'completed'
      ? runEvent('run_completed', { output: null })
      : status === 'failed'
        ? runEvent('run_failed', { error: { message: 'no', details: '' } })
        : runEvent('run_aborted', { by: spec.userId, reason: 'test' });
  return spec.at ? [started, ended].map((e) => ({ ...e, recordedAt: spec.at })) : [started, ended];
}

/** Appends the runs in one transaction (500 at most per call is comfortable); answers their ids in order. */
export async function appendRuns(store: EventStore, specs: readonly RunSpec[]): Promise<string[]> {
  const ids = specs.map(() => randomUUID());
  await store.append(specs.map((spec, i) => ({ streamId: runStream(ids[i]!), expectedVersion: 0, events: eventsOf(ids[i]!, spec) })));
  return ids;
}
