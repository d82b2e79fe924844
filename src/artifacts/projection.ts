// svc_artifacts: one row per uploaded version (never overwritten), keyed by tenant, name and version.
import type { RecordedEvent } from '../eventstore/types.js';
import type { JsonObject } from '../kernel/json.js';
import { defineProjection } from '../projections/types.js';
import { tenantKey } from './queries.js';

export const artifactsProjection = defineProjection({
  name: 'svc_artifacts',
  // 2: the tenant column (db/0008).
  version: 2,
  table: 'svc_artifacts',
  key: ['tenant', 'name', 'version'],
  eventTypes: ['ArtifactUploaded'],
  keysOf: (event: RecordedEvent) => {
    const data = event.data as JsonObject;
    // Uploads of single-tenant deployments carry no tenant.
    return [{ tenant: tenantKey((data.tenant as string | undefined) ?? null), name: String(data.name), version: String(data.version) }];
  },
  evolve: (_row, key, event) => {
    const data = event.data as JsonObject;
    return {
      ...key,
      type: data.type!,
      content: data.content!,
      hash: data.hash!,
      description: data.description ?? null,
      uploaded_by: uploaderOf(event.metadata.actor),
      created_at: String(data.at),
    };
  },
});

/** Events before BEYOND 3.1 name the actor by its id alone; later ones as `{type, id}`. */
function uploaderOf(actor: unknown): string | null {
  if (typeof actor === 'string') return actor;
  const id = (actor as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : null;
}
