// SVC_ERASURE_LOG: a database restored from before an erasure is erased again at start.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Service } from '../../src/main.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call } from '../support/http.js';
import { startTestService } from '../support/service.js';

describe('privacy: the erasure list outside the database', () => {
  let service: Service | undefined;
  after(async () => service?.close());

  it('lists each erasure before it happens and erases again what a restored backup brought back', async () => {
    const databaseUrl = await createTestDatabase();
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'svc-erasures-')), 'erasures.jsonl');
    const env = { SVC_ERASURE_LOG: file };
    service = await startTestService({ databaseUrl, env });
    const admin = await bootstrapAdmin(service.url);
    const created = await call(service.url, 'POST', '/auth/admin/users', {
      token: admin.token,
      json: { email: 'restored@example.com', password: 'long enough password' },
    });
    const id = created.body.id as string;
    const keyRow = async () =>
      (
        await service!.kernel.pool.query('SELECT key_id, wrapped_key, kek_id, destroyed_at FROM svc_data_keys WHERE subject_type = $1 AND subject_id = $2', [
          'user',
          id,
        ])
      ).rows[0];
    const backup = await keyRow();
    expect((await call(service.url, 'POST', '/admin/erasure', { token: admin.token, json: { subject_type: 'user', id } })).status).to.equal(200);
    expect(JSON.parse(readFileSync(file, 'utf8').trim())).to.include({ subject_type: 'user', id });
    expect((await keyRow()).destroyed_at).to.not.equal(null);
    await service.close();

    // The key table as the backup had it: the key lives again.
    await startTestService({ databaseUrl }).then(async (plain) => {
      await plain.kernel.pool.query('UPDATE svc_data_keys SET wrapped_key = $2, kek_id = $3, destroyed_at = NULL WHERE key_id = $1', [
        backup.key_id,
        backup.wrapped_key,
        backup.kek_id,
      ]);
      await plain.close();
    });
    service = await startTestService({ databaseUrl, env });
    expect((await keyRow()).destroyed_at, 'erased again at start').to.not.equal(null);
    const { rows } = await service.kernel.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type = 'subject_erased'", [
      `user-${id}`,
    ]);
    expect(rows[0]!.n).to.equal(1);
  });
});
