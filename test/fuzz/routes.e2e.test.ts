// Property-based fuzzing of every operation of the live /openapi.json (the example project: models,
// workflows with triggers, approvals, schedules, artifacts, federation): no 5xx, no hang, the documented
// error shape on 4xx, every answer valid against its response schema, and nothing written by a refusal.
// Seeded: FUZZ_SEED replays a run, FUZZ_RUNS lengthens it (npm run test:fuzz is the full profile).
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import pg from 'pg';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import type { Service } from '../../src/main.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { operationsOf, schemaValidator, type Doc } from '../api/openapiCheck.js';
import { bootstrapAdmin, call, client } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser, roleId } from '../support/users.js';
import { requestsFor, type FuzzRequest, type KnownValues, type Operation } from './requests.js';
import type { Schema } from './schemaArbitrary.js';
import { eventsOfRequest, send, sideCounts, SIDE_TABLES, type Answer, type SideCounts } from './send.js';
import { Tokens } from './tokens.js';

const FULL = process.env.FUZZ_PROFILE === 'full';
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : FULL ? Date.now() % 2 ** 31 : 20261126;
/** Only the operations whose `method path` contains this text (to replay one). */
const ONLY = process.env.FUZZ_ONLY;
const RUNS = Number(process.env.FUZZ_RUNS ?? (FULL ? 200 : 8));

/** A refusal that writes on purpose: failed sign-ins count in svc_login_throttle (docs/auth.md#login-throttling). */
const MAY_WRITE_WHEN_REFUSED: Record<string, (typeof SIDE_TABLES)[number][]> = {
  'post /auth/token': ['svc_login_throttle'],
};

/** The example project in a folder of its own (a fuzzed version fork writes a YAML file into it). */
function projectCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-fuzz-project-'));
  for (const folder of ['workflows', 'models', 'nodes', 'llms', 'artifacts', 'tools', 'federation']) {
    const source = path.join(EXAMPLE_PROJECT, folder);
    if (existsSync(source)) cpSync(source, path.join(dir, folder), { recursive: true });
  }
  return dir;
}

/** A per-operation seed, so one operation replays alone (mocha --grep) as in the whole run. */
function seedOf(key: string): number {
  let hash = SEED | 0;
  for (const char of key) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash;
}

function responseSchema(doc: Doc, op: Schema, status: number): Schema | undefined {
  const response = op.responses?.[String(status)];
  return response?.content?.['application/json']?.schema as Schema | undefined;
}

/**
 * The only 5xx a healthy service may answer: a workflow's own, documented for the operation (a run
 * that failed in a step, a Response step's `status_code`), and 501 for a federation provider without
 * credentials. Never INTERNAL, never an engine failure,
 * and never UNAVAILABLE: the database stays up throughout.
 */
function isWorkflowsOwn5xx(op: Schema, answer: Answer): boolean {
  const body = answer.body as { code?: string; error?: { message?: string } } | null;
  // Federated sign-in with a provider that has no client credentials: documented, a configuration state.
  if (answer.status === 501 && body?.code === 'NOT_IMPLEMENTED' && op.responses?.['501'] !== undefined) return true;
  if (!/^(trigger|run)_/.test(String(op.operationId)) || op.responses?.[String(answer.status)] === undefined) return false;
  return body?.code === undefined && body?.error?.message !== 'engine failure';
}

/** The error shapes of docs/api.md: `{detail, code}`, or 422 `{detail: [{loc, msg, type}]}`. */
function checkErrorShape(doc: Doc, answer: Answer, what: string): void {
  const component = answer.status === 422 && Array.isArray((answer.body as { detail?: unknown })?.detail) ? 'ValidationError' : 'Error';
  const validate = schemaValidator(doc, { $ref: `#/components/schemas/${component}` });
  expect(validate(answer.body), `${what}: ${answer.status} ${JSON.stringify(answer.body)} is not a ${component}: ${JSON.stringify(validate.errors)}`).to.equal(
    true,
  );
}

describe(`fuzzing every operation of /openapi.json (seed ${SEED}, ${RUNS} runs each; FUZZ_SEED=${SEED} replays)`, function () {
  this.timeout(Math.max(60_000, RUNS * 30_000));
  let service: Service;
  let db: pg.Pool;
  let doc: Doc;
  let tokens: Tokens;
  const known: KnownValues = {};
  const statuses = new Map<number, number>();

  before(async function () {
    this.timeout(120_000);
    console.log(`fuzz: seed ${SEED}, ${RUNS} runs per operation (replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})`);
    const signingKeyHex = generateSigningKeyHex();
    service = await startTestService({ projectDir: projectCopy(), env: { SVC_SIGNING_KEY: signingKeyHex, SVC_SYNC_TIMEOUT_MS: '2000' } });
    db = new pg.Pool({ connectionString: service.kernel.database.url, max: 2 });
    const admin = await bootstrapAdmin(service.url);
    doc = (await call(service.url, 'GET', '/openapi.json')).body as Doc;
    const jwks = (await call(service.url, 'GET', '/auth/jwks.json')).body.keys[0];
    const plain = await createUser(service.url, admin.token, 'plain@example.com', {}, { signIn: false });
    tokens = new Tokens({ kid: jwks.kid, publicX: jwks.x, signingKeyHex, adminId: admin.userId, plainUserId: plain.id });
    await knownValues(service.url, admin.token, known);
  });
  after(async () => {
    await db?.end();
    await service?.close();
  });

  it('covers the route families of the example project', () => {
    const paths = operationsOf(doc).map(({ path }) => path);
    for (const prefix of [
      '/auth/admin/',
      '/api/runs/',
      '/api/approvals',
      '/api/artifacts',
      '/admin/schedules',
      '/admin/events',
      '/models/ticket/',
      '/api/refunds',
    ]) {
      expect(
        paths.some((p) => p.startsWith(prefix)),
        prefix,
      ).to.equal(true);
    }
    expect(operationsOf(doc).length).to.be.greaterThan(80);
  });

  // One test over every operation (they are known only once the service answers), one fc.assert per operation.
  it('answers every fuzzed request of every operation within the properties', async () => {
    const failures: string[] = [];
    for (const operation of operationsOf(doc) as Operation[]) {
      const key = `${operation.method} ${operation.path}`;
      if (ONLY !== undefined && !key.includes(ONLY)) continue;
      const property = fc.asyncProperty(requestsFor(operation, doc.components.schemas, known), (request) => checkOne(key, operation, request));
      try {
        await fc.assert(property, { seed: seedOf(key), numRuns: RUNS, includeErrorInReport: true });
      } catch (error) {
        failures.push(`${key} (seed ${seedOf(key)}):\n${(error as Error).message}`);
      }
    }
    console.log(`fuzz: answers by status ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    expect(failures, failures.join('\n\n')).to.deep.equal([]);
    // The generators reach past authentication and validation, not only into refusals.
    expect([...statuses].filter(([status]) => status < 300).reduce((sum, [, n]) => sum + n, 0)).to.be.greaterThan(0);
  });

  async function checkOne(key: string, { op }: Operation, request: FuzzRequest): Promise<void> {
    const before = await sideCounts(db);
    const answer = await send(service.url, request, tokens);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    if (answer.status >= 502) console.log(`fuzz: ${answer.status} from ${JSON.stringify(request).slice(0, 300)}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    const what = `${request.method} ${request.url} [token ${request.token}]`;
    expect(answer.status < 500 || isWorkflowsOwn5xx(op, answer), `${what}: ${answer.status} ${JSON.stringify(answer.body)}`).to.equal(true);
    const schema = responseSchema(doc, op, answer.status);
    if (schema !== undefined && answer.contentType.startsWith('application/json')) {
      const validate = schemaValidator(doc, schema);
      expect(validate(answer.body), `${what}: ${answer.status} ${JSON.stringify(answer.body)} against its schema: ${JSON.stringify(validate.errors)}`).to.equal(
        true,
      );
    }
    if (answer.status < 400) return;
    // A 4xx the operation documents was checked against its own schema; any other is the generic error shape.
    if (answer.status < 500 && schema === undefined) checkErrorShape(doc, answer, what);
    // A run that ran and ended on an error route (or a Response step's 4xx status_code) answers 4xx
    // with its X-Svc-Run-Id: not a refusal, its journal is the point.
    if (answer.runId !== null && /^(trigger|run)_/.test(String(op.operationId))) return;
    const events = await eventsOfRequest(db, answer.requestId);
    expect(events, `${what}: refused with ${answer.status}, yet wrote events`).to.deep.equal([]);
    const after: SideCounts = await sideCounts(db);
    const allowed = MAY_WRITE_WHEN_REFUSED[key] ?? [];
    for (const table of SIDE_TABLES) {
      if (!allowed.includes(table)) expect(after[table], `${what}: refused with ${answer.status}, yet wrote ${table}`).to.equal(before[table]);
    }
  }
});

/** Ids and names that exist, so fuzzed requests reach past "not found": runs, an approval, users, roles, model rows. */
async function knownValues(url: string, adminToken: string, known: KnownValues): Promise<void> {
  const admin = client(url, adminToken);
  const victim = await createUser(url, adminToken, 'victim@example.com', { victims: ['tickets:read'] }, { signIn: false });
  const run = await admin.post('/api/hello?wait=true', { name: 'ada', values: [1, 2] });
  const held = await admin.post('/api/refunds?wait=false', { order_id: 'o-1', amount: 500 });
  const ticket = await admin.post('/models/ticket/', { subject: 'fuzzed' });
  const approvals = (await admin.get('/api/approvals')).body as { id: string }[];
  const ids = [run.headers.get('x-svc-run-id'), held.body?.id, ticket.body?.id, approvals[0]?.id].filter((v): v is string => typeof v === 'string');
  Object.assign(known, {
    id: ids,
    user_id: [victim.id],
    role_id: [await roleId(url, adminToken, 'victims')],
    name: ['hello', 'refund', 'heartbeat', 'triage_prompt', 'support_steering', 'fuzz_idp', 'customer', 'ticket'],
    version: ['v1', '1'],
    provider: ['google', 'fuzz_idp'],
    workflow: ['heartbeat'],
    agent_id: ['agent', 'review'],
  });
}
