// The writing process of the latency benchmark: appends (or bare NOTIFYs) at a steady rate, stamped with the send time.
// Usage: node --import tsx bench/latencyWriter.ts <store|ping|insert-notify> <database url> <per second> <duration ms>
import { randomUUID } from 'node:crypto';
import { loadSettings } from '../src/config/settings.js';
import { createPool } from '../src/db/pool.js';
import { NO_STREAM } from '../src/eventstore/index.js';
import { createLogger } from '../src/kernel/logger.js';
import { startKernel } from '../src/main.js';
import { BENCH_DIR, PING_CHANNEL, summarize, wallClockMs, type WriterResult } from './support.js';

type Send = (seq: number) => Promise<unknown>;

/**
 * Open loop: call i is due at start + i / rate, whatever earlier calls are doing, so a slow call
 * delays nothing after it (no coordinated omission). Resolves once every call has settled.
 */
async function sendSteadily(perSecond: number, durationMs: number, send: Send): Promise<WriterResult> {
  const total = Math.round((perSecond * durationMs) / 1000);
  const callMs = new Float64Array(total);
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  let failed = 0;
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) * perSecond) / 1000) + 1);
    for (; sent < due; sent++) {
      const seq = sent;
      const t0 = performance.now();
      inFlight.push(
        send(seq).then(
          () => (callMs[seq] = performance.now() - t0),
          () => failed++,
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(inFlight);
  const { p50, p99 } = summarize(callMs.subarray(Math.min(total, perSecond)));
  return { sent, failed, callP50: p50, callP99: p99, elapsedMs: performance.now() - started };
}

export type WriterMode = 'store' | 'ping' | 'insert-notify';

function isMode(mode: string | undefined): mode is WriterMode {
  return mode === 'store' || mode === 'ping' || mode === 'insert-notify';
}

async function main(): Promise<void> {
  const [mode, url, rate, duration] = process.argv.slice(2);
  if (!isMode(mode) || !url) throw new Error('usage: latencyWriter.ts <store|ping|insert-notify> <url> <per second> <duration ms>');
  const perSecond = Number(rate ?? 1000);
  const durationMs = Number(duration ?? 10_000);
  let result: WriterResult;
  if (mode === 'store') {
    const settings = loadSettings({ DATABASE_URL: url, SVC_LOG_LEVEL: 'silent' }, BENCH_DIR);
    const kernel = await startKernel(settings, createLogger('silent'), {
      database: { url, isEmbedded: false, stop: async () => undefined },
      migrate: false,
      projections: [],
    });
    try {
      result = await sendSteadily(perSecond, durationMs, (seq) =>
        kernel.store.append({
          streamId: `run-${randomUUID()}`,
          expectedVersion: NO_STREAM,
          events: [{ type: 'LatencyProbe', data: { seq, sentAt: wallClockMs() } }],
        }),
      );
    } finally {
      await kernel.close();
    }
  } else {
    const pool = createPool({ connectionString: url, max: 10, applicationName: 'bench-ping' });
    try {
      result = await sendSteadily(perSecond, durationMs, async (seq) => {
        const payload = JSON.stringify({ seq, sentAt: wallClockMs() });
        // insert-notify: the durable commit an append pays, then the bare wake-up.
        if (mode === 'insert-notify') {
          await pool.query(`INSERT INTO events (stream_id, stream_type, stream_position, type, data) VALUES ($1, 'run', 1, 'LatencyProbe', $2)`, [
            `run-${randomUUID()}`,
            payload,
          ]);
        }
        await pool.query('SELECT pg_notify($1, $2)', [PING_CHANNEL, payload]);
      });
    } finally {
      await pool.end();
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
