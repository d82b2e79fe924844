// spec.concurrency as the journal shows it: the fixture workflows of the concurrency tests, and how many
// runs held a slot at once, read from the run events in the order the log inserted them.
import { expect } from 'chai';
import type pg from 'pg';

/** A workflow triggered at /api/cc/<name> with `concurrency` (YAML flow text) and `steps` (YAML lines). */
export const concurrencyWorkflow = (name: string, concurrency: string, steps: string) => `kind: Workflow
metadata: {name: ${name}, schema_version: v1, description: concurrency test}
spec:
  concurrency: ${concurrency}
  trigger:
    http: {path: /api/cc/${name}, method: POST}
    input_schema: [{name: ms, type: integer}, {name: ms2, type: integer}, {name: customer, type: string}]
  steps:
${steps}
`;

/** A step of the engine fixture's `slow` runner that waits `ms` of the input. */
export const SLOW = (id: string) => `    - {id: ${id}, kind: Functional, runner: slow, params: {ms: "{{ ms }}"}}`;

/** Events that end a run's hold on its slot. */
const RELEASES = new Set(['run_completed', 'run_failed', 'run_aborted', 'timer_started', 'step_attempt_failed', 'approval_requested', 'paused']);

export interface LoggedEvent {
  run_id: string;
  type: string;
  position: number;
}

/** The run events of `runIds`, in the order they were inserted into the log (global position). */
export async function logOf(db: pg.Pool, runIds: string[]): Promise<LoggedEvent[]> {
  const { rows } = await db.query<{ stream_id: string; type: string; global_position: string }>(
    `SELECT stream_id, type, global_position FROM events WHERE stream_id = ANY($1::text[]) ORDER BY global_position`,
    [runIds.map((id) => `run-${id}`)],
  );
  return rows.map((r) => ({ run_id: r.stream_id.slice('run-'.length), type: r.type, position: Number(r.global_position) }));
}

/** The most runs holding a slot at once: a hold starts at run_dequeued and ends at an event that gives it up. */
export function mostHolding(log: LoggedEvent[]): number {
  const holding = new Set<string>();
  let most = 0;
  for (const event of log) {
    if (event.type === 'run_dequeued') holding.add(event.run_id);
    else if (RELEASES.has(event.type)) holding.delete(event.run_id);
    // A step of a run that holds no slot would be a run executing beyond the limit.
    if (event.type === 'step_started' || event.type === 'step_completed')
      expect(holding.has(event.run_id), `${event.type} of ${event.run_id} without a slot`).to.equal(true);
    most = Math.max(most, holding.size);
  }
  return most;
}
