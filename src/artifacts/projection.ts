// svc_artifacts: one row per uploaded version (never overwritten).
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject } from '../kernel/json.js';
import { defineProjection } from '../projections/types.js';

export const artifactsProjection = defineProjection({
  name: 'svc_artifacts',
  version: 1,
  table: 'svc_artifacts',
  key: ['name', 'version'],
  eventTypes: ['ArtifactUploaded'],
  keysOf: (event: RecordedEvent) => [{ name: String((event.data as JsonObject).name), version: String((event.data as JsonObject).version) }],
  evolve: (_row, key, event) => {
    const data = event.data as JsonObject;
    return {
      ...key,
      type: data.type!,
      content: data.content!,
      hash: data.hash!,
      description: data.description ?? null,
      uploaded_by: (event.metadata.actor as string | undefined) ?? null,
      created_at: String(data.at),
    };
  },
});
