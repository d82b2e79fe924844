// Journal events as the client step stream of SPEC "Events" (step ... done | error, or suspended),
// shared by the SSE trigger and the gRPC-Web transport.
import type { Pool } from '../../db/pool.js';
import type { RecordedEvent } from '../../eventstore/types.js';
import { applyChanges, publicView } from '../../workflows/template.js';
import type { JsonObject } from '../../kernel/json.js';
import { asRunEvent } from '../events.js';
import { runDescriptor } from '../present.js';
import { findRun } from '../queries.js';

export interface ClientFrame {
  event: 'step' | 'done' | 'error' | 'suspended';
  data: JsonObject;
  seq: number;
  /** The stream ends after this frame. */
  isLast: boolean;
}

/** Follows one run's journal, keeping the context so each step frame can carry a snapshot. */
export class ClientFrameMapper {
  constructor(private context: JsonObject) {}

  map(recorded: RecordedEvent): ClientFrame | undefined {
    const event = asRunEvent(recorded);
    const { data } = event;
    const seq = event.streamPosition;
    switch (event.type) {
      case 'step_completed':
      case 'step_failed': {
        const { payload } = event.data;
        this.context = applyChanges(this.context, payload.changes);
        const frame: JsonObject = {
          event_type: 'step',
          step_id: data.agent_id,
          kind: data.engine,
          signal: payload.signal,
          snapshot: publicView(this.context),
          duration_ms: payload.duration_ms ?? 0,
        };
        if (event.type === 'step_failed') frame.error_detail = String(payload.error?.message ?? 'step failed');
        return { event: 'step', data: frame, seq, isLast: false };
      }
      case 'agent_progress':
        return {
          event: 'step',
          data: {
            event_type: 'step',
            step_id: data.agent_id,
            kind: 'Agent',
            signal: 'running',
            snapshot: { agent_progress: event.data.payload },
            duration_ms: 0,
          },
          seq,
          isLast: false,
        };
      case 'approval_requested':
        return { event: 'suspended', data: { event_type: 'suspended' }, seq, isLast: true };
      case 'run_completed':
        return { event: 'done', data: { event_type: 'done', output: event.data.payload.output ?? null }, seq, isLast: true };
      case 'run_failed':
      case 'run_aborted': {
        const error = event.type === 'run_failed' ? event.data.payload.error : { message: 'The run was aborted', details: '' };
        return { event: 'error', data: { event_type: 'error', message: String(error.message), details: String(error.details ?? '') }, seq, isLast: true };
      }
      default:
        return undefined;
    }
  }
}

/** The run a `suspended` frame carries: its descriptor, a courtesy; without the database, only its id. */
export async function suspendedRun(pool: Pool, runId: string): Promise<JsonObject> {
  const row = await findRun(pool, runId).catch(() => undefined);
  return row ? runDescriptor(row) : { id: runId };
}
