// Erasing a user by crypto-shredding: no clear text anywhere, login refused, reads/rebuild/audit null, chains verify.
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { rebuildProjection } from '../../src/projections/index.js';
import { tamper } from '../audit/helpers.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, expectError, requestToken, type Admin } from '../support/http.js';
import { startTestService } from '../support/service.js';

const PASSWORD = 'a long enough password';

describe('privacy: erasing a user', () => {
  let service: Service;
  let databaseUrl: string;
  let admin: Admin;
  const api = (method: string, path: string, json?: unknown) => call(service.url, method, path, { token: admin.token, ...(json ? { json } : {}) });

  async function newUser(email: string, phone: string | null): Promise<string> {
    const created = await api('POST', '/auth/admin/users', { email, password: PASSWORD, phone_number: phone });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return created.body.id as string;
  }

  /** Every table of the database (events included) whose rows' text holds `needle`. */
  async function tablesHolding(needle: string): Promise<string[]> {
    const { rows: tables } = await service.kernel.pool.query<{ name: string }>(
      "SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'",
    );
    const holding: string[] = [];
    for (const { name } of tables) {
      const { rows } = await service.kernel.pool.query(`SELECT 1 FROM ${name} t WHERE t::text ILIKE $1 LIMIT 1`, [`%${needle}%`]);
      if (rows.length > 0) holding.push(name);
    }
    return holding;
  }

  before(async () => {
    databaseUrl = await createTestDatabase();
    service = await startTestService({ databaseUrl });
    admin = await bootstrapAdmin(service.url);
  });
  after(async () => service?.close());

  it('never stores the clear text of an email or phone number, and still signs in by either', async () => {
    await newUser('Ada.Lovelace@example.com', '+15550100');
    expect(await tablesHolding('lovelace')).to.deep.equal([]);
    expect(await tablesHolding('15550100')).to.deep.equal([]);
    expect(await tablesHolding(admin.email)).to.deep.equal([]);
    expect((await requestToken(service.url, 'ada.lovelace@EXAMPLE.com', PASSWORD)).status).to.equal(200);
    expect((await requestToken(service.url, '+15550100', PASSWORD)).status).to.equal(200);
  });

  it('erases: login fails, reads show null, a rebuild keeps null, the audit log shows null and its chains verify', async () => {
    const id = await newUser('grace@example.com', '+15550101');
    const other = await newUser('linus@example.com', '+15550102');
    const erased = await api('POST', '/admin/erasure', { subject_type: 'user', id });
    expect(erased.status, JSON.stringify(erased.body)).to.equal(200);
    expect(erased.body).to.deep.equal({ subject_type: 'user', id, erased: true });

    expectError(await requestToken(service.url, 'grace@example.com', PASSWORD), 401);
    expectError(await requestToken(service.url, '+15550101', PASSWORD), 401);
    const user = await api('GET', `/auth/admin/users/${id}`);
    expect(user.body).to.include({ id, email: null, phone_number: null });
    expect((await api('GET', `/auth/admin/users/${other}`)).body).to.include({ email: 'linus@example.com', phone_number: '+15550102' });

    const rebuilt = await rebuildProjection(service.kernel.pool, service.kernel.registry, service.kernel.registry.get('iam_users')!);
    expect(rebuilt?.projection).to.equal('iam_users');
    expect((await api('GET', `/auth/admin/users/${id}`)).body).to.include({ email: null, phone_number: null });

    const log = await api('GET', `/admin/events?stream_id=user-${id}`);
    const types = log.body.events.map((e: { type: string }) => e.type);
    expect(types).to.include.members(['UserCreated', 'subject_erased']);
    const created = log.body.events.find((e: { type: string }) => e.type === 'UserCreated');
    expect(created.data).to.include({ email: null, phoneNumber: null });
    const otherLog = await api('GET', `/admin/events?stream_id=user-${other}`);
    expect(otherLog.body.events[0].data.email, 'a live subject shows sealed').to.match(/^enc:v1:/);

    const verified = await api('GET', '/admin/audit/verify');
    expect(verified.body, JSON.stringify(verified.body)).to.include({ ok: true });
    expect(await tablesHolding('grace@')).to.deep.equal([]);

    // The email is free again; erasing twice answers the same and appends nothing.
    await newUser('grace@example.com', null);
    expect((await api('POST', '/admin/erasure', { subject_type: 'user', id })).status).to.equal(200);
    const again = await api('GET', `/admin/events?stream_id=user-${id}&type=subject_erased`);
    expect(again.body.events).to.have.length(1);
  });

  it('answers 404 for an unknown user and 422 for a bad body', async () => {
    expectError(await api('POST', '/admin/erasure', { subject_type: 'user', id: '00000000-0000-4000-8000-000000000001' }), 404, 'NOT_FOUND');
    expect((await api('POST', '/admin/erasure', { subject_type: 'planet', id: 'x' })).status).to.equal(422);
  });

  it('a tampered ciphertext is a clear DATA_INTEGRITY error, never read as plaintext', async () => {
    const id = await newUser('mallory@example.com', null);
    const { rows } = await service.kernel.pool.query<{ email: string }>('SELECT email FROM iam_users WHERE id = $1', [id]);
    const parts = rows[0]!.email.split(':');
    parts[4] = Buffer.from('eve@example.com').toString('base64url');
    await tamper(databaseUrl, `UPDATE iam_users SET email = '${parts.join(':')}' WHERE id = '${id}'`);
    expectError(await api('GET', `/auth/admin/users/${id}`), 500, 'DATA_INTEGRITY');
    await tamper(databaseUrl, `UPDATE iam_users SET email = 'eve@example.com' WHERE id = '${id}'`);
    expectError(await api('GET', `/auth/admin/users/${id}`), 500, 'DATA_INTEGRITY');
    // A plain value where a sealed one belongs is not trusted as anyone's email either: it matches no blind index.
    expectError(await requestToken(service.url, 'eve@example.com', PASSWORD), 401);
  });
});
