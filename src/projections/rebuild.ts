// Rebuilding a read model from the log: replay into a shadow table, catch up under lock, swap.
import type { Pool, PoolClient } from '../db/pool.js';
import { selectCommittedOutsideSnapshot, streamEventsByPosition } from '../eventstore/sql.js';
import type { RecordedEvent } from '../eventstore/types.js';
import { RowFold } from './fold.js';
import { applyToTable, LIVE_SCHEMA, type ProjectionRegistry } from './registry.js';
import { deleteRows, insertRows, loadRows, quoteIdent, readTableShape, upsertRows, type TableShape } from './tableSql.js';
import type { RowProjection } from './types.js';

const SHADOW_SCHEMA = 'svc_rebuild';
const PAGE_SIZE = 5000;
/** Rows held in memory before they are written to the shadow table. */
const MAX_HELD_ROWS = 200_000;
const WRITE_CHUNK = 5000;

export interface RebuildProgress {
  projection: string;
  applied: number;
  total: number;
}

export interface RebuildResult {
  projection: string;
  version: number;
  events: number;
  rows: number;
  durationMs: number;
}

export interface RebuildOptions {
  onProgress?: (progress: RebuildProgress) => void;
  /** Skip when the table already is at the projection's version (checked under the lock). */
  onlyIfStale?: boolean;
}

/**
 * Replays every event the projection handles, in global_position order, into a copy of its table,
 * then swaps the copy in. Reads of the live table go on until the swap, which holds an exclusive
 * lock only while it applies the few events committed since the replay's snapshot.
 */
export async function rebuildProjection(
  pool: Pool,
  registry: ProjectionRegistry,
  projection: RowProjection,
  options: RebuildOptions = {},
): Promise<RebuildResult | undefined> {
  const started = Date.now();
  const lockClient = await pool.connect();
  try {
    // One rebuild of a projection at a time, across processes.
    await lockClient.query('SELECT pg_advisory_lock(hashtext($1))', [`svc.projection:${projection.name}`]);
    if (options.onlyIfStale) {
      const { rows } = await lockClient.query<{ version: number }>('SELECT version FROM projection_state WHERE name = $1', [projection.name]);
      if (rows[0]?.version === projection.version) return undefined;
    }
    const shadow = await createShadowTable(lockClient, projection);
    const replayed = await replay(pool, lockClient, projection, shadow, options);
    const applied = replayed.applied + (await swapIn(pool, registry, projection, shadow, replayed.snapshot, replayed.applied));
    options.onProgress?.({ projection: projection.name, applied, total: applied });
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${quoteIdent(LIVE_SCHEMA)}.${quoteIdent(projection.table)}`);
    return { projection: projection.name, version: projection.version, events: applied, rows: rows[0]?.n ?? 0, durationMs: Date.now() - started };
  } finally {
    await lockClient.query('SELECT pg_advisory_unlock(hashtext($1))', [`svc.projection:${projection.name}`]).catch(() => undefined);
    lockClient.release();
  }
}

/**
 * Folds every event one snapshot sees, in global_position order (stream order within a stream), into
 * the shadow table through `writer`; answers the snapshot so the swap can apply what it did not see.
 */
async function replay(
  pool: Pool,
  writer: PoolClient,
  projection: RowProjection,
  shadow: TableShape,
  options: RebuildOptions,
): Promise<{ snapshot: string; applied: number }> {
  const eventTypes = projection.eventTypes;
  const reader = await pool.connect();
  try {
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await reader.query<{ snapshot: string; total: number }>(
      'SELECT pg_current_snapshot()::text AS snapshot, count(*) AS total FROM events WHERE type = ANY($1::text[])',
      [eventTypes],
    );
    const { snapshot, total } = rows[0]!;
    const fold = new RowFold(projection);
    let after = 0;
    let applied = 0;
    let isShadowEmpty = true;
    for (;;) {
      const held: RecordedEvent[] = [];
      // While the shadow table is empty a key the fold does not hold has no row: each event is folded
      // as it arrives and is garbage at once. Once rows were written, the page is held so that the
      // rows its keys have in the table are loaded in one query before it is folded.
      const read = await streamEventsByPosition(reader, after, PAGE_SIZE, { eventTypes }, (event) => {
        if (isShadowEmpty) fold.apply(event);
        else held.push(event);
        after = event.globalPosition;
      });
      if (held.length > 0) {
        const unknown = fold.unknownKeys(held);
        fold.seed(unknown, await loadRows(writer, shadow, unknown, false));
        for (const event of held) fold.apply(event);
      }
      applied += read;
      options.onProgress?.({ projection: projection.name, applied, total: Math.max(total, applied) });
      if (fold.size > MAX_HELD_ROWS) {
        await writeChanges(pool, writer, shadow, fold, isShadowEmpty);
        fold.clear();
        isShadowEmpty = false;
      }
      if (read < PAGE_SIZE) break;
    }
    await reader.query('COMMIT');
    await writeChanges(pool, writer, shadow, fold, isShadowEmpty);
    return { snapshot, applied };
  } catch (error) {
    await reader.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    reader.release();
  }
}

async function createShadowTable(client: PoolClient, projection: RowProjection): Promise<TableShape> {
  const table = quoteIdent(projection.table);
  await client.query(`DROP TABLE IF EXISTS ${quoteIdent(SHADOW_SCHEMA)}.${table}`);
  await client.query(`CREATE TABLE ${quoteIdent(SHADOW_SCHEMA)}.${table} (LIKE ${quoteIdent(LIVE_SCHEMA)}.${table} INCLUDING ALL)`);
  return readTableShape(client, SHADOW_SCHEMA, projection.table, projection.key);
}

/**
 * Writes what the fold changed, in chunks over two connections when the pool has one to spare:
 * while PostgreSQL stores one chunk, this process serializes the next and another backend stores
 * it. Into a table still empty, plain inserts (no row there to replace or delete). Each key comes
 * once, so the chunks never collide.
 */
async function writeChanges(pool: Pool, writer: PoolClient, shadow: TableShape, fold: RowFold, isShadowEmpty: boolean): Promise<void> {
  const { upserts, deletes } = fold.takeChanges();
  const write = isShadowEmpty ? insertRows : upsertRows;
  const chunks: ((client: PoolClient) => Promise<void>)[] = [];
  for (let i = 0; i < upserts.length; i += WRITE_CHUNK) chunks.push((client) => write(client, shadow, upserts.slice(i, i + WRITE_CHUNK)));
  if (!isShadowEmpty) {
    for (let i = 0; i < deletes.length; i += WRITE_CHUNK) chunks.push((client) => deleteRows(client, shadow, deletes.slice(i, i + WRITE_CHUNK)));
  }
  if (chunks.length === 0) return;
  // Only a connection to be had without waiting: a small pool may hold nothing but this rebuild's.
  const hasSpare = pool.idleCount > 0 || pool.totalCount < (pool.options.max ?? 10);
  const helper = chunks.length > 1 && hasSpare ? await pool.connect() : undefined;
  try {
    const drain = async (client: PoolClient) => {
      try {
        for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) await chunk(client);
      } catch (error) {
        chunks.length = 0; // the other connection stops too
        throw error;
      }
    };
    const outcomes = await Promise.allSettled([writer, ...(helper ? [helper] : [])].map(drain));
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  } finally {
    helper?.release();
  }
}

/**
 * Under an exclusive lock on the live table, applies what the replay's snapshot did not see
 * (writers that touched the live table before the lock have committed by now; later ones wait and
 * then write to the swapped-in table), then replaces the live table in the same transaction.
 */
async function swapIn(
  pool: Pool,
  registry: ProjectionRegistry,
  projection: RowProjection,
  shadow: TableShape,
  replayedSnapshot: string,
  replayedCount: number,
): Promise<number> {
  const client = await pool.connect();
  const live = `${quoteIdent(LIVE_SCHEMA)}.${quoteIdent(projection.table)}`;
  try {
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${live} IN ACCESS EXCLUSIVE MODE`);
    // Every event not yet replayed belongs to a transaction the replay's snapshot did not see.
    const late = await selectCommittedOutsideSnapshot(client, replayedSnapshot, { eventTypes: projection.eventTypes });
    if (late.length > 0) await applyToTable(client, projection, shadow, late);
    await client.query(`DROP TABLE ${live}`);
    await client.query(`ALTER TABLE ${shadow.qualified} SET SCHEMA ${quoteIdent(LIVE_SCHEMA)}`);
    await client.query(
      `INSERT INTO projection_state (name, version, rebuilt_at, events_applied) VALUES ($1, $2, now(), $3)
       ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, rebuilt_at = EXCLUDED.rebuilt_at,
         events_applied = EXCLUDED.events_applied`,
      [projection.name, projection.version, replayedCount + late.length],
    );
    await client.query('COMMIT');
    registry.forgetShapes();
    return late.length;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
