// The workflows benchmark's physical reference: a bare express + pg route that writes the journal rows
// of one `hello` run (taken from a real run) in one statement and one commit, then answers 201.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import express from 'express';
import pg from 'pg';
import type { Queryable } from '../src/db/pool.js';
import { serveOnLoopback, type ReferenceServer } from './support.js';

/** One journal row of a run, as the events table holds it (the stream id is the request's own). */
export interface JournalRow {
  stream_type: string;
  type: string;
  data: unknown;
  metadata: unknown;
  /** Hex of the row's chain hash: written as it is, so both tables carry the same bytes per row. */
  hash: string;
}

/** Same columns and indexes as the events table (LIKE copies no trigger): the same rows cost the same to index. */
const REFERENCE_TABLE_SQL = 'CREATE TABLE IF NOT EXISTS bench_bare_events (LIKE events INCLUDING ALL)';

const INSERT_SQL = `INSERT INTO bench_bare_events (stream_id, stream_type, stream_position, type, data, metadata, hash)
  SELECT $1, r.stream_type, r.position, r.type, r.data, r.metadata, decode(r.hash, 'hex')
  FROM unnest($2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[]) AS r(stream_type, position, type, data, metadata, hash)`;

/** The journal rows of the newest run in `pool`'s events table, in stream order. */
export async function newestRunRows(pool: Queryable): Promise<JournalRow[]> {
  const { rows } = await pool.query<JournalRow>(
    `SELECT stream_type, type, data, metadata, encode(hash, 'hex') AS hash FROM events
     WHERE stream_id = (SELECT stream_id FROM events WHERE stream_type = 'run' ORDER BY global_position DESC LIMIT 1)
     ORDER BY stream_position`,
  );
  if (rows.length === 0) throw new Error('no run in the events table to take the reference rows from');
  return rows;
}

/**
 * `PUT /rows` sets the rows to write (once, before the load); `POST /api/hello` runs the workflow's
 * three steps in the process (as the peers' baseline does), writes the rows under a new stream id
 * and answers 201 with the result. JSON texts are serialised per request, as a server writing its
 * own rows would.
 */
export async function startJournalReference(databaseUrl: string, poolSize: number): Promise<ReferenceServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on('error', () => undefined);
  await pool.query(REFERENCE_TABLE_SQL);
  let rows: JournalRow[] = [];
  const app = express();
  app.use(express.json());
  app.put('/rows', (req, res) => {
    rows = req.body as JournalRow[];
    res.status(204).end();
  });
  app.post('/api/hello', async (req, res) => {
    try {
      const input = req.body as { name: string; values?: number[] };
      const name = input.name.trim().replace(/^\w/, (c) => c.toUpperCase());
      const greeting = `Hello, ${name}!`;
      const total = (input.values ?? []).reduce((sum, value) => sum + value, 0);
      await pool.query(INSERT_SQL, [
        `run-${randomUUID()}`,
        rows.map((r) => r.stream_type),
        rows.map((_, index) => index + 1),
        rows.map((r) => r.type),
        rows.map((r) => JSON.stringify(r.data)),
        rows.map((r) => JSON.stringify(r.metadata)),
        rows.map((r) => r.hash),
      ]);
      res.status(201).json({ greeting, length: greeting.length, total });
    } catch (error) {
      res.status(500).json({ error: String(error) });
    }
  });
  return serveOnLoopback(createServer(app), pool);
}
