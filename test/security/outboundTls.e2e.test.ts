// ASVS 5.0 V16.3.4 (security control failures such as backend TLS failures are logged) for the requests
// svc sends out: an APICall step and an Agent's model on an https peer on loopback whose certificate
// is self-signed (test/security/fixtures/selfSigned.*, a test-only key valid until 2126). TLS refuses the
// peer before any request is sent; the run takes its error route with an error naming the TLS failure,
// and the service logs a warning with the code and the URL, without its query or any credential.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createLogger } from '../../src/kernel/logger.js';
import { startService, type Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { journalOf } from '../support/runs.js';
import { testSettings } from '../support/service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The fault suite's peer project: `ask` (an APICall, one retry) and `think` (an Agent on the model SVC_LLM_BASE_URL names). */
const PEER_PROJECT = path.join(here, '..', 'faults', 'fixtures', 'peer');
const SECRET = 's3cret-in-the-query';

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}
const WARN = 40;

describe('ASVS V16.3.4 outbound TLS failures', function () {
  this.timeout(30_000);
  let peer: Server;
  let peerUrl: string;
  let requestsSeen = 0;
  let service: Service;
  let token: string;
  const lines: string[] = [];
  const logged = () => lines.map((line) => JSON.parse(line) as LogLine);

  before(async () => {
    const fixture = (name: string) => readFileSync(path.join(here, 'fixtures', name));
    peer = createServer({ key: fixture('selfSigned.key'), cert: fixture('selfSigned.crt') }, (_req, res) => {
      requestsSeen++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":"reached"}');
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    peerUrl = `https://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    const settings = testSettings(await createTestDatabase(), { SVC_LLM_BASE_URL: `${peerUrl}/v1` }, PEER_PROJECT);
    service = await startService(settings, createLogger('info', { write: (line: string) => void lines.push(line) }));
    ({ token } = await bootstrapAdmin(service.url));
  });
  after(async () => {
    await service?.close();
    peer?.closeAllConnections();
    await new Promise((resolve) => peer?.close(resolve));
  });

  /** The warnings the outbound guard wrote for TLS failures. */
  const tlsWarnings = () => logged().filter((line) => line.level === WARN && line.msg === 'outbound request failed on TLS');

  it('V16.3.4 an APICall to a peer with a self-signed certificate takes its error route naming the TLS failure, and is logged without secrets', async () => {
    const before = tlsWarnings().length;
    const result = await call(service.url, 'POST', '/api/ask', { token, json: { api_url: `${peerUrl}/hook?api_key=${SECRET}`, tag: 'tls' } });
    expect(result.status, JSON.stringify(result.body)).to.equal(502);
    expect(result.body.error).to.match(/self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    const journal = await journalOf(service.url, token, result.headers.get('x-svc-run-id')!);
    const failed = journal.find((event) => event.type === 'step_failed' && event.agent_id === 'ask');
    expect(failed.payload.failure).to.match(/^fetch failed: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/);
    expect(failed.payload.attempts, 'the step retried once, as its http.retries says').to.equal(2);

    const warnings = tlsWarnings().slice(before);
    expect(warnings, 'one warning per attempt').to.have.length(2);
    for (const warning of warnings) {
      expect(warning).to.include({ url: `${peerUrl}/hook`, method: 'POST', code: 'DEPTH_ZERO_SELF_SIGNED_CERT', reason: 'self-signed certificate' });
    }
    expect(lines.filter((line) => line.includes(SECRET))).to.deep.equal([]);
    expect(requestsSeen, 'TLS refused the peer before any request was sent').to.equal(0);
  });

  it("V16.3.4 an Agent whose model's server has a self-signed certificate takes its error route naming the TLS failure, and is logged", async () => {
    const before = tlsWarnings().length;
    const result = await call(service.url, 'POST', '/api/think', { token, json: { tag: 'tls' } });
    expect(result.status, JSON.stringify(result.body)).to.equal(502);
    expect(result.body.error).to.match(/^the model call failed: Connection error: fetch failed: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)$/);
    const warnings = tlsWarnings().slice(before);
    expect(warnings, 'one warning per request the SDK made (max_retries: 1)').to.have.length(2);
    for (const warning of warnings) {
      expect(warning).to.include({ url: `${peerUrl}/v1/chat/completions`, method: 'POST', code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    }
    expect(
      lines.filter((line) => line.includes('test-key')),
      'the model api_key is in no log line',
    ).to.deep.equal([]);
    expect(requestsSeen).to.equal(0);
  });
});
