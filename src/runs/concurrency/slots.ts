// The concurrency read model's SQL (svc_runs.concurrency_key and slot, db/0015): the (workflow, key)
// lock, holders, the queue in arrival order. Each receives its client; the lock is the transaction's.
import type { RunDescriptor } from '../../contract/types.js';
import type { Queryable } from '../../db/pool.js';

/**
 * Serializes admissions of one (workflow, key) until the transaction ends: the counts read after it
 * include every admission committed before, and none can commit in between. A hash collision only
 * makes two groups wait on each other.
 */
export async function lockSlots(db: Queryable, workflow: string, key: string): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('svc-concurrency:' || $1 || ':' || $2, 0))`, [workflow, key]);
}

/** Runs holding a slot of (workflow, key), `runId` not counted. */
export async function countHolders(db: Queryable, workflow: string, key: string, runId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM svc_runs WHERE workflow = $1 AND concurrency_key = $2 AND slot = 'held' AND id <> $3`,
    [workflow, key, runId],
  );
  return rows[0]?.n ?? 0;
}

/** Runs waiting for a slot of (workflow, key) that arrived before the run (createdAt null: a run not journaled yet, after every one). */
export async function countWaitingAhead(db: Queryable, workflow: string, key: string, runId: string, createdAt: string | null): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM svc_runs
     WHERE workflow = $1 AND concurrency_key = $2 AND slot = 'waiting' AND id <> $3
       AND ($4::timestamptz IS NULL OR (created_at, id) < ($4::timestamptz, $3::uuid))`,
    [workflow, key, runId, createdAt],
  );
  return rows[0]?.n ?? 0;
}

export interface WaitingGroup {
  workflow: string;
  key: string;
  /** The version of the group's longest waiting run (its definition says the limit). */
  schemaVersion: string;
}

/** (workflow, key) pairs with runs waiting for a slot, at most `limit`. */
export async function selectWaitingGroups(db: Queryable, limit: number): Promise<WaitingGroup[]> {
  const { rows } = await db.query<{ workflow: string; key: string; schema_version: string }>(
    `SELECT DISTINCT ON (workflow, concurrency_key) workflow, concurrency_key AS key, schema_version
     FROM svc_runs WHERE slot = 'waiting'
     ORDER BY workflow, concurrency_key, created_at, id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ workflow: r.workflow, key: r.key, schemaVersion: r.schema_version }));
}

/** The first `limit` runs of the queue of (workflow, key), in arrival order, with their journal versions. */
export async function selectQueueHead(db: Queryable, workflow: string, key: string, limit: number): Promise<{ id: string; version: number }[]> {
  const { rows } = await db.query<{ id: string; last_seq: string }>(
    `SELECT id, last_seq FROM svc_runs WHERE workflow = $1 AND concurrency_key = $2 AND slot = 'waiting'
     ORDER BY created_at, id LIMIT $3`,
    [workflow, key, limit],
  );
  return rows.map((r) => ({ id: r.id, version: Number(r.last_seq) }));
}

/** Run detail: a run waiting for a slot with its place in the queue (1: the next to start). */
export async function withQueuePosition(db: Queryable, run: RunDescriptor): Promise<RunDescriptor> {
  if (run.concurrency?.slot !== 'waiting') return run;
  const ahead = await countWaitingAhead(db, run.workflow, run.concurrency.key, run.id, run.created_at);
  return { ...run, concurrency: { ...run.concurrency, queue_position: ahead + 1 } };
}
