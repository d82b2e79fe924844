// Per-subject data keys on a real database: seal, open, erase, tampering, two processes' KEKs.
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { DataIntegrityError } from '../../src/kernel/errors.js';
import { openDataKeys } from '../../src/privacy/boot.js';
import { DataKeys, userSubject } from '../../src/privacy/dataKeys.js';
import { createTestDatabase } from '../support/db.js';

describe('privacy data keys', () => {
  let pool: Pool;
  before(async () => {
    pool = createPool({ connectionString: await createTestDatabase(), max: 4 });
  });
  after(async () => pool.end());

  it('seals per subject, opens in one look-up, and reads an erased subject as null', async () => {
    const keys = new DataKeys(pool, { current: randomBytes(32) });
    const ada = await keys.seal(userSubject('ada'), 'ada@example.com');
    const bob = await keys.seal(userSubject('bob'), 'bob@example.com');
    expect(ada.split(':')[2]).not.to.equal(bob.split(':')[2]);
    const opened = await keys.openDeep({ email: ada, nested: [{ email: bob }], plain: 'kept', at: new Date(0) });
    expect(opened).to.deep.equal({ email: 'ada@example.com', nested: [{ email: 'bob@example.com' }], plain: 'kept', at: new Date(0) });
    expect(await keys.erase(userSubject('ada'))).to.equal(true);
    expect(await keys.erase(userSubject('ada'))).to.equal(false);
    expect(await keys.openDeep({ email: ada, other: bob })).to.deep.equal({ email: null, other: 'bob@example.com' });
    await expectRejection(keys.seal(userSubject('ada'), 'again@example.com'), /was erased/);
  });

  it('gives a subject sealed by many callers at once, from two DataKeys (two processes), one key', async () => {
    const kek = randomBytes(32);
    const [one, two] = [new DataKeys(pool, { current: kek }), new DataKeys(pool, { current: kek })];
    const subject = { type: 'record', id: `race-${randomBytes(4).toString('hex')}` };
    const sealed = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? one : two).seal(subject, `value-${i}`)));
    expect(new Set(sealed.map((value) => value.split(':')[2])).size).to.equal(1);
    const opened = await one.openAll(sealed);
    expect(sealed.map((value) => opened.get(value))).to.deep.equal(sealed.map((_, i) => `value-${i}`));
  });

  it('refuses a tampered value and a key id it never held', async () => {
    const keys = new DataKeys(pool, { current: randomBytes(32) });
    const sealed = await keys.seal(userSubject('carol'), '+15550100');
    const parts = sealed.split(':');
    parts[5] = Buffer.alloc(16, 1).toString('base64url');
    await expectRejection(keys.openDeep({ phone: parts.join(':') }), /does not authenticate/);
    parts[2] = '00000000-0000-4000-8000-000000000000';
    await expectRejection(keys.openDeep({ phone: parts.join(':') }), /never held/);
  });

  it('shares the database-kept KEK between processes without SVC_DATA_KEY, and keeps reading it once SVC_DATA_KEY is set', async () => {
    const settings = { env: 'development' as const, dataKeyHex: undefined, previousDataKeyHex: undefined };
    const first = await openDataKeys(pool, settings, false);
    const second = await openDataKeys(pool, settings, false);
    const sealed = await first.seal(userSubject('dave'), 'dave@example.com');
    expect(await second.openDeep(sealed)).to.equal('dave@example.com');
    expect(await first.blindIndex('email', 'x')).to.equal(await second.blindIndex('email', 'x'));
    const withKey = await openDataKeys(pool, { ...settings, dataKeyHex: randomBytes(32).toString('hex') }, true);
    expect(await withKey.openDeep(sealed)).to.equal('dave@example.com');
    await expectRejection(openDataKeys(pool, { ...settings, env: 'production' }, true), /SVC_DATA_KEY is required/);
  });

  it('refuses to open with a KEK it does not hold', async () => {
    const sealed = await new DataKeys(pool, { current: randomBytes(32) }).seal(userSubject('erin'), 'erin@example.com');
    await expectRejection(new DataKeys(pool, { current: randomBytes(32) }).openDeep(sealed), /does not hold/);
  });
});

async function expectRejection(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, 'expected a rejection').to.be.instanceOf(Error);
  expect((error as Error).message).to.match(pattern);
  if (!/erased|required/.test(pattern.source)) expect(error).to.be.instanceOf(DataIntegrityError);
}
