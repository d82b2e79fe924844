// Which projections are current, and bringing stale ones up to date at start.
import type { Pool } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { rebuildProjection, type RebuildOptions, type RebuildResult } from './rebuild.js';
import type { ProjectionRegistry } from './registry.js';
import { quoteIdent } from './tableSql.js';

export interface ProjectionStatus {
  name: string;
  table: string;
  version: number;
  /** The version the table was last rebuilt at; null if never. */
  storedVersion: number | null;
  isCurrent: boolean;
  rows: number;
  rebuiltAt: string | null;
}

export async function projectionStatus(pool: Pool, registry: ProjectionRegistry): Promise<ProjectionStatus[]> {
  const { rows } = await pool.query<{ name: string; version: number; rebuilt_at: string | null }>('SELECT name, version, rebuilt_at FROM projection_state');
  const stored = new Map(rows.map((r) => [r.name, r]));
  const result: ProjectionStatus[] = [];
  for (const projection of registry.list()) {
    const state = stored.get(projection.name);
    const { rows: count } = await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(projection.table)}`);
    result.push({
      name: projection.name,
      table: projection.table,
      version: projection.version,
      storedVersion: state?.version ?? null,
      isCurrent: state?.version === projection.version,
      rows: count[0]?.n ?? 0,
      rebuiltAt: state?.rebuilt_at ?? null,
    });
  }
  return result;
}

/** Rebuilds every projection whose code version differs from the one its table was built with. */
export async function rebuildStaleProjections(
  pool: Pool,
  registry: ProjectionRegistry,
  logger: Logger,
  options: RebuildOptions = {},
): Promise<RebuildResult[]> {
  const results: RebuildResult[] = [];
  for (const status of await projectionStatus(pool, registry)) {
    if (status.isCurrent) continue;
    logger.info({ projection: status.name, from: status.storedVersion, to: status.version }, 'rebuilding projection');
    // Another process may be rebuilding it too: the second one finds it current under the lock.
    const result = await rebuildProjection(pool, registry, registry.get(status.name)!, { ...options, onlyIfStale: true });
    if (result) results.push(result);
  }
  return results;
}
