// svc_run_retention: holds and expiries per run, folded from retention-<run id> streams.
import type { RecordedEvent } from '../../eventstore/types.js';
import { defineProjection, type Row } from '../../projections/types.js';
import { RETENTION_EVENT_TYPES } from './decide.js';

type Data = Record<string, unknown>;
const data = (event: RecordedEvent) => event.data as Data;
const text = (value: unknown) => (typeof value === 'string' ? value : null);

export const runRetentionProjection = defineProjection({
  name: 'svc_run_retention',
  version: 1,
  table: 'svc_run_retention',
  key: ['run_id'],
  eventTypes: [...RETENTION_EVENT_TYPES],
  keysOf: (event) => [{ run_id: String(data(event).run_id) }],
  evolve(row: Row | null, key, event): Row {
    const d = data(event);
    const base: Row = row ?? {
      run_id: key.run_id!,
      workflow: text(d.workflow),
      held: false,
      held_at: null,
      held_by: null,
      hold_reason: null,
      ended_at: null,
      expired_at: null,
    };
    switch (event.type) {
      case 'run_hold_placed':
        return { ...base, held: true, held_at: text(d.at), held_by: text((event.metadata.actor as Data | undefined)?.id), hold_reason: text(d.reason) };
      case 'run_hold_released':
        return { ...base, held: false, held_at: null, held_by: null, hold_reason: null };
      default:
        return { ...base, ended_at: text(d.ended_at), expired_at: text(d.at) };
    }
  },
});
