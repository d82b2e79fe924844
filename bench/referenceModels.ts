// The models benchmark's reference: a bare express + pg app with the list SELECTs and a one-row INSERT, no auth, no events.
import { createServer } from 'node:http';
import express from 'express';
import pg from 'pg';
import type { Queryable } from '../src/db/pool.js';
import type { ModelDefinition } from '../src/models/definition.js';
import { listRecords } from '../src/models/queries.js';
import { serveOnLoopback, type ReferenceServer } from './support.js';

/** A statement and its parameters, as the service would send them. */
export interface CapturedQuery {
  text: string;
  values: unknown[];
}

/**
 * The statement (and parameters) src/models/queries.ts listRecords sends for `GET /models/item/?limit=100`,
 * taken from the function itself with a Queryable that only records, so the reference cannot drift from it.
 */
export async function captureListQuery(model: ModelDefinition): Promise<CapturedQuery> {
  let captured: CapturedQuery | undefined;
  const recorder = {
    query: async (text: string, values: unknown[]) => {
      captured = { text, values };
      return { rows: [] };
    },
  } as unknown as Queryable;
  await listRecords(recorder, model, { limit: 100, offset: 0, filters: {} }, null);
  return captured!;
}

/** The peers' baseline list: the same rows without the tenant predicate, which lets the primary key index serve the ORDER BY. */
export const ITEM_INDEXED_LIST_SQL = 'SELECT "id", "name", "description", "price", "created_at" FROM "items" ORDER BY "id" LIMIT 100';

/** Same columns as the model's table; the reference's writes go here so the list reads the same rows in both. */
const REFERENCE_TABLE_SQL = 'CREATE TABLE IF NOT EXISTS bench_bare_items (LIKE items INCLUDING ALL)';

export async function startModelsReference(databaseUrl: string, poolSize: number, list: CapturedQuery): Promise<ReferenceServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on('error', () => undefined);
  await pool.query(REFERENCE_TABLE_SQL);
  const app = express();
  app.use(express.json());
  app.get('/items', async (_req, res) => {
    try {
      const { rows } = await pool.query(list.text, list.values);
      res.json(rows);
    } catch (error) {
      res.status(500).json({ error: String(error) });
    }
  });
  app.get('/items-indexed', async (_req, res) => {
    try {
      const { rows } = await pool.query(ITEM_INDEXED_LIST_SQL);
      res.json(rows);
    } catch (error) {
      res.status(500).json({ error: String(error) });
    }
  });
  app.post('/items', async (req, res) => {
    try {
      const body = req.body as { name: string; description: string; price: number };
      const { rows } = await pool.query(
        `INSERT INTO bench_bare_items (id, name, description, price, created_at) VALUES (gen_random_uuid(), $1, $2, $3, now())
         RETURNING id, name, description, price, created_at`,
        [body.name, body.description, body.price],
      );
      res.status(201).json(rows[0]);
    } catch (error) {
      res.status(500).json({ error: String(error) });
    }
  });
  return serveOnLoopback(createServer(app), pool);
}
