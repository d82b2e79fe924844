// `svc keys rotate-data-key`: data keys rewrapped with the new SVC_DATA_KEY, events untouched, values still open.
import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { migrate } from '../../src/db/migrate.js';
import { openDataKeys } from '../../src/privacy/boot.js';
import { DataKeys, userSubject } from '../../src/privacy/dataKeys.js';
import { createTestDatabase } from '../support/db.js';
import { runCli } from '../support/serviceProcess.js';

describe('privacy: svc keys rotate-data-key', () => {
  let pool: Pool;
  let databaseUrl: string;
  before(async () => {
    databaseUrl = await createTestDatabase();
    pool = createPool({ connectionString: databaseUrl, max: 4 });
    await migrate(pool);
  });
  after(async () => pool.end());

  const keysTable = async () => (await pool.query('SELECT key_id, wrapped_key, kek_id FROM svc_data_keys ORDER BY key_id')).rows;
  const eventsDigest = async () =>
    createHash('sha256')
      .update(JSON.stringify((await pool.query('SELECT * FROM events ORDER BY global_position')).rows))
      .digest('hex');

  it('generates a data key: 64 hex characters, a new one each time', async () => {
    const [a, b] = await Promise.all([runCli(['keys', 'generate-data-key'], {}), runCli(['keys', 'generate-data-key'], {})]);
    expect(a.stdout.trim()).to.match(/^[0-9a-f]{64}$/);
    expect(b.stdout.trim()).to.match(/^[0-9a-f]{64}$/);
    expect(a.stdout).to.not.equal(b.stdout);
  });

  it('moves keys from the database-kept key to SVC_DATA_KEY, then from SVC_DATA_KEY_PREVIOUS to a new one', async () => {
    const settings = { env: 'development' as const, dataKeyHex: undefined, previousDataKeyHex: undefined };
    const early = await openDataKeys(pool, settings, false);
    const sealed = await Promise.all(['a', 'b', 'c'].map((id) => early.seal(userSubject(id), `${id}@example.com`)));
    const blind = await early.blindIndex('email', 'a@example.com');
    const events = await eventsDigest();

    const first = randomBytes(32).toString('hex');
    const rotated = await runCli(['keys', 'rotate-data-key'], { DATABASE_URL: databaseUrl, SVC_DATA_KEY: first });
    expect(rotated.code, rotated.stderr).to.equal(0);
    const report = JSON.parse(rotated.stdout);
    expect(report.rewrapped).to.equal(4); // three users and the blind-index key
    expect(report.keys_by_kek).to.have.length(1);
    const onlyFirst = new DataKeys(pool, { current: Buffer.from(first, 'hex') });
    expect(await onlyFirst.openDeep(sealed)).to.deep.equal(['a@example.com', 'b@example.com', 'c@example.com']);
    expect(await onlyFirst.blindIndex('email', 'a@example.com'), 'blind indexes do not change').to.equal(blind);

    const second = randomBytes(32).toString('hex');
    const before = await keysTable();
    const again = await runCli(['keys', 'rotate-data-key'], { DATABASE_URL: databaseUrl, SVC_DATA_KEY: second, SVC_DATA_KEY_PREVIOUS: first });
    expect(again.code, again.stderr).to.equal(0);
    expect(JSON.parse(again.stdout).rewrapped).to.equal(4);
    const after = await keysTable();
    expect(after.map((row) => row.key_id)).to.deep.equal(before.map((row) => row.key_id));
    expect(after.map((row) => row.wrapped_key)).to.not.include.members(before.map((row) => row.wrapped_key));
    expect(await new DataKeys(pool, { current: Buffer.from(second, 'hex') }).openDeep(sealed)).to.deep.equal([
      'a@example.com',
      'b@example.com',
      'c@example.com',
    ]);
    expect(await eventsDigest(), `the events are not touched: ${JSON.stringify((await pool.query('SELECT stream_id, type FROM events')).rows)}`).to.equal(
      events,
    );

    // Without the old key, the rotation refuses and changes nothing.
    const third = randomBytes(32).toString('hex');
    const refused = await runCli(['keys', 'rotate-data-key'], { DATABASE_URL: databaseUrl, SVC_DATA_KEY: third });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/SVC_DATA_KEY_PREVIOUS/);
    expect(await keysTable()).to.deep.equal(after);
  });
});
