// Which projections are current, and bringing stale ones up to date at start.
import type { Pool, Queryable } from '../db/pool.js';
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

/**
 * How far each read model is behind the log, in seconds. Projections apply inline, in the append's
 * own transaction, so a current one is 0 behind; one whose code version differs from its table's
 * (stale until a rebuild) is behind since the first event recorded after its last rebuild.
 */
export async function projectionLags(db: Queryable, registry: ProjectionRegistry): Promise<{ name: string; lagSeconds: number }[]> {
  const { rows } = await db.query<{ name: string; version: number; rebuilt_at: Date | null }>('SELECT name, version, rebuilt_at FROM projection_state');
  const stored = new Map(rows.map((r) => [r.name, r]));
  const lags: { name: string; lagSeconds: number }[] = [];
  for (const projection of registry.list()) {
    const state = stored.get(projection.name);
    if (state?.version === projection.version) {
      lags.push({ name: projection.name, lagSeconds: 0 });
      continue;
    }
    // Rare (a rolling deploy of another version): the scan this needs is paid only then.
    const { rows: behind } = await db.query<{ lag_s: number | null }>(
      `SELECT extract(epoch FROM now() - min(recorded_at))::float8 AS lag_s FROM events WHERE recorded_at > coalesce($1::timestamptz, '-infinity')`,
      [state?.rebuilt_at ?? null],
    );
    lags.push({ name: projection.name, lagSeconds: Math.max(0, behind[0]?.lag_s ?? 0) });
  }
  return lags;
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
