// Forward-only SQL migrations from db/: numbered files, each applied once in its own transaction.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.js';

/** The repository's db/ folder, found from this file in src/ or dist/. */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../db');

/** Serialises migrators across processes; an arbitrary constant shared by every svc process. */
const MIGRATION_LOCK_KEY = 7_312_004_001;

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export async function listMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const id = Number(file.slice(0, 4));
    if (migrations.some((m) => m.id === id)) throw new Error(`Two migrations are numbered ${id}`);
    migrations.push({ id, name: file, sql: await readFile(path.join(dir, file), 'utf8') });
  }
  return migrations;
}

/**
 * Applies pending migrations. A session advisory lock makes a second process wait and then find
 * nothing left to do, so two processes may migrate at once.
 */
export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await listMigrations(dir);
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ id: number; name: string }>('SELECT id, name FROM schema_migrations');
    const done = new Map(rows.map((r) => [r.id, r.name]));
    const latest = Math.max(0, ...done.keys());
    const known = Math.max(0, ...migrations.map((m) => m.id));
    if (latest > known) {
      throw new Error(`The database is at migration ${latest}, newer than this build knows (${known}); refusing to run`);
    }
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      try {
        await client.query('BEGIN');
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [migration.id, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
  return applied;
}
