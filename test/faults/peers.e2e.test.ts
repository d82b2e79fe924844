// Fault injection on outside peers: an API on loopback that answers, stalls past the step's timeout,
// or resets the connection, under many runs at once. Each run ends within its timeout and retry (no
// hang): an answer completes it, a stalled or dead peer takes the error route after the documented
// attempts, the peer is called exactly as often as the journal says, and the invariants hold.
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type pg from 'pg';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { killAllServices, ServiceProcess } from '../support/serviceProcess.js';
import { openPool } from '../durability/helpers.js';
import { Acknowledged, checkInvariants } from './invariants.js';
import { PROFILE } from './profile.js';

const PEER_PROJECT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'peer');
const MODES = ['ok', 'slow', 'dead'] as const;

/** The peer: `/ok` answers, `/slow` never does, `/dead` resets the connection; counts calls per tag. */
function startPeer(hits: Map<string, number>): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const tag = (JSON.parse(body) as { tag: string }).tag;
      hits.set(tag, (hits.get(tag) ?? 0) + 1);
      if (req.url === '/dead') req.socket.destroy();
      else if (req.url === '/ok') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: tag }));
      // `/slow`: left hanging; the step's timeout ends it.
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe(`faults (${PROFILE.name}): slow and dead peers`, function () {
  this.timeout(PROFILE.settleMs + 60_000);
  let db: pg.Pool;
  let service: ServiceProcess;
  let peer: Server;
  const hits = new Map<string, number>();

  before(async () => {
    const databaseUrl = await createTestDatabase();
    db = openPool(databaseUrl);
    peer = await startPeer(hits);
    service = await ServiceProcess.start(databaseUrl, PEER_PROJECT);
  });
  after(async () => {
    await killAllServices();
    peer?.closeAllConnections();
    peer?.close();
    await db?.end();
  });

  it(`${PROFILE.runsInFlight} runs against a peer that answers, stalls or resets: each ends on its route, calls match the journal`, async () => {
    const { token } = await bootstrapAdmin(service.url);
    const { port } = peer.address() as { port: number };
    const acked = new Acknowledged();
    const answers = await Promise.all(
      Array.from({ length: PROFILE.runsInFlight }, async (_, i) => {
        const mode = MODES[i % MODES.length]!;
        const tag = `${mode}-${i}`;
        const result = await call(service.url, 'POST', '/api/ask', { token, json: { api_url: `http://127.0.0.1:${port}/${mode}`, tag } });
        return { mode, tag, result };
      }),
    );
    for (const { mode, tag, result } of answers) {
      expect(result.status, `${tag}: ${JSON.stringify(result.body)}`).to.equal(mode === 'ok' ? 201 : 502);
      acked.runIds.add(result.headers.get('x-svc-run-id')!);
      if (mode === 'ok') expect(result.body).to.deep.equal({ answer: tag, tag });
    }
    const runs = await checkInvariants(db, acked, { settleMs: PROFILE.settleMs, diagnostics: () => service.output });
    // The peer saw each attempt the journal records, no more: one for an answer, two (retries: 1) otherwise.
    const { rows } = await db.query<{ tag: string; attempts: number }>(
      `SELECT s.data->'payload'->'input'->>'tag' AS tag, count(e.*)::int AS attempts
         FROM events s JOIN events e ON e.stream_id = s.stream_id AND e.type IN ('step_attempt_failed', 'step_completed', 'step_failed') AND e.data->>'agent_id' = 'ask'
        WHERE s.type = 'run_started' GROUP BY 1`,
    );
    for (const { tag, attempts } of rows) {
      expect(attempts, `${tag}: journaled attempts`).to.equal(tag.startsWith('ok') ? 1 : 2);
      expect(hits.get(tag), `${tag}: calls the peer saw`).to.equal(attempts);
    }
    expect(rows.length).to.equal(PROFILE.runsInFlight);
    console.log(`      ${runs} runs ended; ${[...hits.values()].reduce((n, h) => n + h, 0)} calls to the peer`);
  });
});
