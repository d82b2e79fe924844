// The SSE benchmark's reference: the same fan-out with a bare INSERT ... RETURNING per event and direct socket writes.
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { serveOnLoopback, type ReferenceServer } from './support.js';

export interface ReferencePlan {
  runs: number;
  ticks: number;
  tickMs: number;
  gateMs: number;
}

const TABLE_SQL = `CREATE TABLE IF NOT EXISTS bench_sse_ref (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run integer NOT NULL, seq integer NOT NULL,
  type text NOT NULL, data jsonb NOT NULL, recorded_at timestamptz NOT NULL DEFAULT now())`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * GET /events?run=K opens a stream of "run" K; POST /start?runs=&ticks=&tick_ms=&gate_ms= plays every run:
 * run_started, a gate, then per tick a pause and two events (step_completed, step_started), then
 * run_completed, after which each stream ends. Each event is one autocommit INSERT whose `now()` is the
 * frame's timestamp, written to the run's clients after the INSERT returns (as svc's local delivery does).
 */
export async function startSseReference(databaseUrl: string, poolSize: number): Promise<ReferenceServer> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on('error', () => undefined);
  await pool.query(TABLE_SQL);
  const clients = new Map<number, Set<ServerResponse>>();

  const emit = async (run: number, seq: number, type: string, payload: Record<string, unknown>): Promise<void> => {
    const { rows } = await pool.query<{ ms: number }>(
      'INSERT INTO bench_sse_ref (run, seq, type, data) VALUES ($1, $2, $3, $4) RETURNING (extract(epoch FROM recorded_at) * 1000)::float8 AS ms',
      [run, seq, type, payload],
    );
    const data = JSON.stringify({ run_id: `ref-${run}`, seq, ts_ms: rows[0]!.ms, type, agent_id: 'tick', engine: 'Functional', payload });
    const frame = `id: ${seq}\nevent: ${type}\ndata: ${data}\n\n`;
    for (const res of clients.get(run) ?? []) res.write(frame);
  };

  const play = async (run: number, plan: ReferencePlan): Promise<void> => {
    let seq = 0;
    await emit(run, ++seq, 'run_started', { input: { run } });
    await sleep(plan.gateMs);
    for (let tick = 1; tick <= plan.ticks; tick++) {
      await sleep(plan.tickMs);
      await emit(run, ++seq, 'step_completed', { signal: 'default', changes: { set: { ticks: tick }, unset: [] }, duration_ms: plan.tickMs });
      await emit(run, ++seq, 'step_started', {});
    }
    await emit(run, ++seq, 'run_completed', { output: { ticks: plan.ticks } });
    for (const res of clients.get(run) ?? []) res.end();
    clients.delete(run);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname === '/events') {
      const run = Number(url.searchParams.get('run'));
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      res.socket?.setNoDelay(true);
      let set = clients.get(run);
      if (!set) clients.set(run, (set = new Set()));
      set.add(res);
      res.on('close', () => set.delete(res));
      return;
    }
    if (req.method === 'POST' && url.pathname === '/start') {
      const plan: ReferencePlan = {
        runs: Number(url.searchParams.get('runs')),
        ticks: Number(url.searchParams.get('ticks')),
        tickMs: Number(url.searchParams.get('tick_ms')),
        gateMs: Number(url.searchParams.get('gate_ms')),
      };
      // Runs start spread over one tick, as svc's runs do, so that their events do not all land at once.
      for (let run = 0; run < plan.runs; run++) {
        setTimeout(() => void play(run, plan).catch((error: unknown) => console.error(error)), (run * plan.tickMs) / plan.runs);
      }
      res.writeHead(202).end();
      return;
    }
    res.writeHead(404).end();
  });
  return serveOnLoopback(server, pool);
}
