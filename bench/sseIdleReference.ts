// Section 12's reference, a process of its own: bare express + pg serving the same streams from svc's
// tables, so that /health while 10,000 streams open has a floor measured in the same run.
import express from 'express';
import pg from 'pg';

/**
 * GET /api/runs/:id/events: the bearer compared as text (svc verifies a cached JWT), the run's row
 * looked up, its journal read and written as frames, the response kept open with one heartbeat
 * timer for all; nothing else (no logging, metrics, limits or access rules). GET /health: `SELECT 1`
 * on a connection of its own, as svc's probe does.
 */
async function main(): Promise<void> {
  const { DATABASE_URL: databaseUrl, PORT: port, BENCH_TOKEN: token } = process.env;
  if (!databaseUrl || !port || !token) throw new Error('DATABASE_URL, PORT and BENCH_TOKEN are required');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  const probe = new pg.Client({ connectionString: databaseUrl });
  await probe.connect();
  const open = new Set<express.Response>();
  setInterval(() => open.forEach((res) => res.write(': heartbeat\n\n')), 15_000).unref();

  const app = express();
  app.get('/health', async (_req, res) => {
    await probe.query('SELECT 1');
    res.json({ status: 'ok' });
  });
  app.get('/api/runs/:id/events', async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return void res.status(401).end();
    const run = await pool.query('SELECT id, status FROM svc_runs WHERE id = $1', [req.params.id]);
    if (run.rowCount === 0) return void res.status(404).end();
    const journal = await pool.query<{ stream_position: string; type: string; data: unknown; recorded_at: Date }>(
      'SELECT stream_position, type, data, recorded_at FROM events WHERE stream_id = $1 ORDER BY stream_position',
      [`run-${req.params.id}`],
    );
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.socket?.setNoDelay(true);
    for (const row of journal.rows) {
      res.write(`id: ${row.stream_position}\nevent: ${row.type}\ndata: ${JSON.stringify({ ...(row.data as object), ts: row.recorded_at })}\n\n`);
    }
    open.add(res);
    res.on('close', () => open.delete(res));
  });
  app.listen(Number(port), '127.0.0.1');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
