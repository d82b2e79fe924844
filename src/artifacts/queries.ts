// Reading uploaded artifact versions (svc_artifacts); every function receives its client.
import type { Queryable } from '../db/pool.js';
import type { JsonValue } from '../kernel/json.js';
import type { ArtifactType } from './artifact.js';

export interface UploadRow {
  name: string;
  version: string;
  type: ArtifactType;
  content: JsonValue;
  hash: string;
  description: string | null;
  created_at: string;
}

/**
 * The tenant key column: a primary key column cannot be NULL, so "no tenant" (a single-tenant
 * deployment) is stored as ''. SVC_TENANT_IDS never holds an empty id.
 */
export const tenantKey = (tenant: string | null): string => tenant ?? '';

/** One tenant's uploads, of one name or of every name. */
export async function tenantUploads(db: Queryable, tenant: string | null, name?: string): Promise<UploadRow[]> {
  const { rows } = await db.query<UploadRow>(
    `SELECT name, version, type, content, hash, description, created_at FROM svc_artifacts
     WHERE tenant = $1 AND ($2::text IS NULL OR name = $2)`,
    [tenantKey(tenant), name ?? null],
  );
  return rows;
}

/** Every uploaded version of every tenant, without content (boot validation of artifact references). */
export async function allUploadedVersions(db: Queryable): Promise<{ tenant: string | null; name: string; version: string; type: string }[]> {
  const { rows } = await db.query<{ tenant: string; name: string; version: string; type: string }>('SELECT tenant, name, version, type FROM svc_artifacts');
  return rows.map((row) => ({ ...row, tenant: row.tenant === '' ? null : row.tenant }));
}
