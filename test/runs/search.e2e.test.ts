// GET /api/runs search: filters that combine, keyset pages (X-Next-Cursor) that never skip or repeat a
// run while runs are created, tenant and owner isolation under every filter, and 400 for bad values.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { runsProjection } from '../../src/runs/projection.js';
import { bootstrapAdmin, client, expectError } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { createUser } from '../support/users.js';
import { appendRuns, type RunSpec } from './searchFixtures.js';

type Query = Record<string, string | undefined>;
const BASE = Date.parse('2026-01-01T00:00:00.000Z');
const minute = (n: number) => new Date(BASE + n * 60_000).toISOString();

describe('GET /api/runs search', function () {
  this.timeout(120_000);
  let service: Service;
  const tokens: Record<'root' | 't1Admin' | 'alice' | 'bob' | 't2Admin', string> = { root: '', t1Admin: '', alice: '', bob: '', t2Admin: '' };
  const users: Record<string, string> = {};
  const specs = new Map<string, RunSpec & { at: string }>();
  let parentId: string;

  /** Every page of a search, following X-Next-Cursor; answers the ids in order and the pages' sizes. */
  async function allPages(token: string, query: Query, limit: number): Promise<{ ids: string[]; pages: number[] }> {
    const ids: string[] = [];
    const pages: number[] = [];
    for (let cursor: string | undefined; ;) {
      const page = await search(token, { ...query, limit: String(limit), cursor });
      expect(page.status, JSON.stringify(page.body)).to.equal(200);
      ids.push(...page.body.map((r: { id: string }) => r.id));
      pages.push(page.body.length);
      cursor = page.headers.get('x-next-cursor') ?? undefined;
      if (!cursor) return { ids, pages };
    }
  }
  const search = (token: string, query: Query) => {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    return client(service.url, token).get(`/api/runs?${params.toString()}`);
  };

  /** What the fixture says a search answers: the matching runs, newest first, ties by id (descending). */
  function expected(userId: string | null, query: Query): string[] {
    const statuses = query.status?.split(',');
    return [...specs.entries()]
      .filter(([, s]) => s.tenant === 't1' && (userId === null || s.userId === userId))
      .filter(([, s]) => (query.workflow === undefined || s.workflow === query.workflow) && (!statuses || statuses.includes(s.status!)))
      .filter(
        ([, s]) => (query.created_after === undefined || s.at > query.created_after) && (query.created_before === undefined || s.at < query.created_before),
      )
      .filter(([, s]) => query.parent_run_id === undefined || s.parentRunId === query.parent_run_id)
      .sort(([idA, a], [idB, b]) => (a.at === b.at ? (idA < idB ? 1 : -1) : a.at < b.at ? 1 : -1))
      .map(([id]) => id);
  }

  async function add(list: (RunSpec & { at: string })[]): Promise<string[]> {
    const ids = await appendRuns(service.kernel.store, list);
    ids.forEach((id, i) => specs.set(id, list[i]!));
    return ids;
  }

  before(async function () {
    service = await startTestService({ env: { SVC_TENANT_IDS: 't1,t2' } });
    const root = await bootstrapAdmin(service.url);
    tokens.root = root.token;
    users.root = root.userId;
    const readers = { run_readers: ['runs:read'] };
    for (const [name, roles, tenant] of [
      ['t1Admin', { t1_admins: ['iam:admin'] }, 't1'],
      ['alice', readers, 't1'],
      ['bob', readers, 't1'],
      ['t2Admin', { t2_admins: ['iam:admin'] }, 't2'],
    ] as [keyof typeof tokens, Record<string, string[]>, string][]) {
      const user = await createUser(service.url, root.token, `${name.toLowerCase()}@example.com`, roles, { tenant });
      tokens[name] = user.token;
      users[name] = user.id;
    }
    parentId = (await add([{ userId: users.alice!, tenant: 't1', at: minute(0) }]))[0]!;
    const workflows = ['alpha', 'beta', 'gamma'];
    const statuses = ['completed', 'failed', 'aborted'] as const;
    await add(
      Array.from({ length: 60 }, (_, i) => ({
        userId: i % 2 ? users.alice! : users.bob!,
        tenant: 't1',
        workflow: workflows[i % 3]!,
        status: statuses[Math.floor(i / 3) % 3]!,
        ...(i % 4 === 0 ? { parentRunId: parentId } : {}),
        // Runs share a minute in pairs: the id orders them.
        at: minute(1 + Math.floor(i / 2)),
      })),
    );
    const elsewhere = (userId: string, tenant: string | null) =>
      Array.from({ length: 5 }, (_, i) => ({ userId, tenant, workflow: 'beta', status: 'failed' as const, parentRunId: parentId, at: minute(i) }));
    await add([...elsewhere(users.t2Admin!, 't2'), ...elsewhere(users.root!, null)]);
  });
  after(async () => {
    await service?.close();
  });

  it('combines status, workflow, created_after, created_before and parent_run_id; every page size gives the same runs', async () => {
    let checked = 0;
    for (const who of ['alice', 't1Admin'] as const)
      for (const workflow of [undefined, 'beta'])
        for (const status of [undefined, 'failed', 'failed,aborted'])
          for (const created_after of [undefined, minute(10)])
            for (const created_before of [undefined, minute(25)])
              for (const parent_run_id of [undefined, parentId]) {
                const query = { workflow, status, created_after, created_before, parent_run_id };
                const want = expected(who === 'alice' ? users.alice! : null, query);
                const whole = await search(tokens[who], query);
                expect(
                  whole.body.map((r: { id: string }) => r.id),
                  JSON.stringify(query),
                ).to.deep.equal(want);
                expect(whole.headers.get('x-next-cursor'), 'no cursor on the last page').to.equal(null);
                expect((await allPages(tokens[who], query, 7)).ids, JSON.stringify(query)).to.deep.equal(want);
                checked += want.length;
              }
    expect(checked).to.be.greaterThan(500);
    // offset still pages, and a cursor and an offset together skip within what follows the cursor.
    const all = expected(null, {});
    expect((await search(tokens.t1Admin, { limit: '5', offset: '3' })).body.map((r: { id: string }) => r.id)).to.deep.equal(all.slice(3, 8));
    const first = await search(tokens.t1Admin, { limit: '4' });
    const next = await search(tokens.t1Admin, { limit: '4', offset: '2', cursor: first.headers.get('x-next-cursor')! });
    expect(next.body.map((r: { id: string }) => r.id)).to.deep.equal(all.slice(6, 10));
  });

  it('keeps tenants and owners apart under every filter', async () => {
    for (const query of [
      {},
      { status: 'failed' },
      { workflow: 'beta' },
      { parent_run_id: parentId },
      { workflow: 'beta', status: 'failed', parent_run_id: parentId },
    ]) {
      const t2 = (await allPages(tokens.t2Admin, query, 3)).ids;
      expect(t2).to.have.length(5);
      expect(t2.every((id) => specs.get(id)!.tenant === 't2')).to.equal(true);
      // The bootstrapped admin belongs to the first tenant (t1): runs without a tenant are nobody's here.
      expect((await allPages(tokens.root, query, 1000)).ids, JSON.stringify(query)).to.deep.equal(expected(null, query));
      const bob = (await search(tokens.bob, query)).body.map((r: { id: string }) => r.id);
      expect(bob).to.deep.equal(expected(users.bob!, query));
      expect(bob.every((id: string) => specs.get(id)!.userId === users.bob)).to.equal(true);
    }
  });

  it('fills parent_run_id from run_started; a rebuild of svc_runs gives the same rows byte for byte', async () => {
    const checksum = async () =>
      (await service.kernel.pool.query(`SELECT count(*) AS n, md5(string_agg(r::text, '|' ORDER BY id)) AS sum FROM svc_runs r`)).rows[0];
    const { rows } = await service.kernel.pool.query('SELECT id FROM svc_runs WHERE parent_run_id = $1 ORDER BY id', [parentId]);
    expect(rows.map((r) => r.id)).to.deep.equal(
      [...specs]
        .filter(([, s]) => s.parentRunId === parentId)
        .map(([id]) => id)
        .sort(),
    );
    const live = await checksum();
    await rebuildProjection(service.kernel.pool, service.kernel.registry, runsProjection);
    expect(await checksum()).to.deep.equal(live);
  });

  it('answers 400 in the error shape for a bad status, date, parent, cursor or limit', async () => {
    for (const bad of [
      { status: 'finished' },
      { status: 'failed,' },
      { created_after: 'yesterday' },
      { created_before: '2026-13-45T00:00:00Z' },
      { parent_run_id: 'not-a-uuid' },
      { cursor: 'bm9wZQ' },
      { cursor: Buffer.from(JSON.stringify(['2026-01-01T00:00:00Z', 'x'])).toString('base64url') },
      { limit: '0' },
      { limit: '1001' },
      { offset: '-1' },
    ]) {
      const answer = await search(tokens.t1Admin, bad);
      expectError(answer, 400, 'BAD_REQUEST');
      expect(answer.body.detail, JSON.stringify(bad)).to.be.a('string');
    }
  });

  it('pages over 10,000 runs created while paging: never a run skipped or repeated', async function () {
    this.timeout(300_000);
    const before: string[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const list = Array.from({ length: 500 }, (_, i) => ({ userId: users.t2Admin!, tenant: 't2', status: (['completed', 'failed'] as const)[i % 2]! }));
      before.push(...(await appendRuns(service.kernel.store, list)));
    }
    const failedBefore = before.filter((_, i) => i % 2 === 1);
    let paging = true;
    let created = 0;
    const writer = (async () => {
      while (paging)
        created += (
          await appendRuns(
            service.kernel.store,
            Array.from({ length: 25 }, () => ({ userId: users.t2Admin!, tenant: 't2', status: 'failed' as const })),
          )
        ).length;
    })();
    try {
      for (const [query, existing] of [
        [{}, before],
        [{ status: 'failed,aborted' }, failedBefore],
      ] as [Query, string[]][]) {
        const { ids, pages } = await allPages(tokens.t2Admin, query, 97);
        expect(new Set(ids).size, 'no run twice').to.equal(ids.length);
        const seen = new Set(ids);
        expect(
          existing.filter((id) => !seen.has(id)),
          'no run skipped',
        ).to.deep.equal([]);
        expect(pages.length).to.be.greaterThan(existing.length / 97);
      }
    } finally {
      paging = false;
      await writer;
    }
    expect(created, 'runs were created while paging').to.be.greaterThan(0);
  });
});
