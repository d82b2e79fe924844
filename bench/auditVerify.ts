// Benchmark 9: `svc audit verify` over a log written by the store (hash chains on), against a bare read of the same rows.
import { verifyAuditLog } from '../src/audit/verify.js';
import { selectChainLinks, type StreamCursor } from '../src/audit/queries.js';
import { EventStore } from '../src/eventstore/index.js';
import { generateSigningKeyHex, loadSigningKeys } from '../src/iam/keys.js';
import type { Pool } from '../src/db/pool.js';
import { createBenchDatabase, describeMachine, fmtInt, fmtRatio, markdownTable, median, SAMPLE_METADATA, sampleRunStarted, type Benchmark } from './support.js';

const STREAMS = Number(process.env.BENCH_VERIFY_STREAMS ?? 30_000);
const EVENTS_PER_STREAM = 10;
const STREAMS_PER_CALL = 100;
const ROUNDS = 3;
const TARGET_EVENTS_PER_SECOND = 100_000;

/** The log: STREAMS run streams of ten events, written by multi-stream appends of the store (so hashed as in production). */
async function fill(store: EventStore): Promise<void> {
  for (let first = 0; first < STREAMS; first += STREAMS_PER_CALL) {
    const streams = Array.from({ length: Math.min(STREAMS_PER_CALL, STREAMS - first) }, (_, k) => first + k);
    await store.append(
      streams.map((i) => ({
        streamId: `run-${String(i).padStart(8, '0')}`,
        expectedVersion: 0,
        events: Array.from({ length: EVENTS_PER_STREAM }, (_, n) => ({
          type: n === 0 ? 'RunStarted' : 'StepCompleted',
          data: { ...sampleRunStarted(i), step: n },
        })),
      })),
      { metadata: SAMPLE_METADATA },
    );
  }
}

/** The reference: the same keyset walk and columns (data and metadata as text), nothing parsed or hashed. */
async function bareRead(pool: Pool): Promise<number> {
  let cursor: StreamCursor | null = null;
  let count = 0;
  for (;;) {
    const page = await selectChainLinks(pool, cursor, 5000);
    if (page.length === 0) return count;
    count += page.length;
    const [streamId, streamPosition] = page.at(-1)!;
    cursor = { streamId, streamPosition };
  }
}

async function timed(work: () => Promise<number>): Promise<number> {
  const start = performance.now();
  const count = await work();
  return count / ((performance.now() - start) / 1000);
}

export const auditVerifyBenchmark: Benchmark = {
  name: 'audit-verify',
  description: `svc audit verify over ${fmtInt(STREAMS * EVENTS_PER_STREAM)} hashed events, against a bare keyset read`,
  async run() {
    const db = await createBenchDatabase('audit_verify');
    try {
      const fillStart = performance.now();
      await fill(new EventStore({ pool: db.pool }));
      const fillSeconds = (performance.now() - fillStart) / 1000;
      await db.pool.query('VACUUM ANALYZE events');
      const keys = await loadSigningKeys(generateSigningKeyHex());
      const verify: number[] = [];
      const bare: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        verify.push(
          await timed(async () => {
            const report = await verifyAuditLog(db.pool, keys.jwks);
            if (!report.ok || report.events_checked !== STREAMS * EVENTS_PER_STREAM) throw new Error(`verify failed: ${JSON.stringify(report)}`);
            return report.events_checked;
          }),
        );
        bare.push(await timed(() => bareRead(db.pool)));
      }
      return { title: 'audit-verify', markdown: await report(verify, bare, fillSeconds) };
    } finally {
      await db.drop();
    }
  },
};

async function report(verify: number[], bare: number[], fillSeconds: number): Promise<string> {
  const all = (list: number[]) => `**${fmtInt(median(list))}** (${list.map(fmtInt).join(', ')})`;
  const total = STREAMS * EVENTS_PER_STREAM;
  return [
    '## 11. Verifying the hash chains (`npm run bench -- audit-verify`)',
    '',
    `${new Date().toISOString()} · ${await describeMachine()}`,
    '',
    `${fmtInt(total)} events in ${fmtInt(STREAMS)} \`run-\` streams of ${EVENTS_PER_STREAM} (data 150-200 bytes, metadata with actor/tenant/request id), ` +
      `written by \`EventStore.append\` calls of ${STREAMS_PER_CALL} streams each (${fillSeconds.toFixed(1)} s, hash chains computed in the append statement). ` +
      `${ROUNDS} alternating rounds; medians, all rounds in brackets. Verify walks every stream in (stream_id, stream_position) keyset pages of 5,000, ` +
      'pages handed to hashing threads (one per core, at most four: JSON parse, JCS, SHA-256 per event) while the next pages are read; ' +
      'no checkpoints exist, so this is the chain pass.',
    '',
    markdownTable(
      ['job', 'events/s'],
      [
        ['`verifyAuditLog` (svc audit verify)', all(verify)],
        ['reference: bare keyset read of the same rows and columns, same pool', all(bare)],
      ],
    ),
    '',
    `**${fmtInt(median(verify))} events/s** (target >= ${fmtInt(TARGET_EVENTS_PER_SECOND)}: ${median(verify) >= TARGET_EVENTS_PER_SECOND ? 'met' : 'missed'}); ` +
      `ratio verify / bare read: **${fmtRatio(median(verify) / median(bare))}**.`,
  ].join('\n');
}
