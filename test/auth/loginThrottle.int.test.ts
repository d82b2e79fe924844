// The login throttle's policy against a real PostgreSQL: the limits per account and address, per
// address and per account under attack, counted in the database, without bcrypt in the way.
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { TooManyRequestsError } from '../../src/kernel/errors.js';
import { createLoginThrottle, LOGIN_LIMITS, type LoginThrottle } from '../../src/iam/loginThrottle.js';
import { createTestDatabase } from '../support/db.js';

/** A failed sign-in: counted, never forgiven. Answers the 429's Retry-After, or null when it was let through. */
async function fail(throttle: LoginThrottle, username: string, address: string): Promise<number | null> {
  try {
    await throttle.attempt(username, address);
    return null;
  } catch (error) {
    expect(error).to.be.instanceOf(TooManyRequestsError);
    return (error as TooManyRequestsError).retryAfterSeconds;
  }
}

describe('login throttle (PostgreSQL counters)', function () {
  this.timeout(60_000);
  let pool: Pool;
  let throttle: LoginThrottle;

  beforeEach(async () => {
    pool = createPool({ connectionString: await createTestDatabase() });
    throttle = createLoginThrottle(pool);
  });
  afterEach(async () => {
    await pool?.end();
  });

  it('lets 5 failures of one account from one address through, then refuses with the time left in the window', async () => {
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await fail(throttle, 'ana@example.com', '10.0.0.1'));
    expect(answers.slice(0, LOGIN_LIMITS.pair.points)).to.deep.equal([null, null, null, null, null]);
    for (const retryAfter of answers.slice(LOGIN_LIMITS.pair.points))
      expect(retryAfter).to.be.within(LOGIN_LIMITS.pair.duration - 60, LOGIN_LIMITS.pair.duration);
    // The same account from elsewhere, and another account from the same address, are untouched.
    expect(await fail(throttle, 'ana@example.com', '10.0.0.2')).to.equal(null);
    expect(await fail(throttle, 'ben@example.com', '10.0.0.1')).to.equal(null);
    // The account is matched without regard to case, as sign-in matches it.
    expect(await fail(throttle, 'ANA@example.com', '10.0.0.1')).to.be.a('number');
  });

  it('forgives an account and address pair its failures when the password is right', async () => {
    for (let i = 0; i < LOGIN_LIMITS.pair.points - 1; i++) await fail(throttle, 'cy@example.com', '10.0.0.3');
    const forgive = await throttle.attempt('cy@example.com', '10.0.0.3');
    await forgive();
    for (let i = 0; i < LOGIN_LIMITS.pair.points; i++) expect(await fail(throttle, 'cy@example.com', '10.0.0.3')).to.equal(null);
    expect(await fail(throttle, 'cy@example.com', '10.0.0.3')).to.be.a('number');
  });

  it('cuts every address to one attempt per window while an account is under attack, without locking its owner out', async () => {
    // Failures spread over addresses, each within its own allowance, until the account passes its limit.
    const addresses = Math.ceil(LOGIN_LIMITS.account.points / LOGIN_LIMITS.pair.points);
    for (let a = 0; a < addresses; a++) {
      for (let i = 0; i < LOGIN_LIMITS.pair.points; i++) expect(await fail(throttle, 'dee@example.com', `10.1.0.${a}`)).to.equal(null);
    }
    // A new address gets one attempt (the owner's, say), then waits; other accounts are not affected.
    expect(await fail(throttle, 'dee@example.com', '10.2.0.1')).to.equal(null);
    expect(await fail(throttle, 'dee@example.com', '10.2.0.1')).to.be.a('number');
    const owner = await throttle.attempt('dee@example.com', '10.2.0.2');
    await owner();
    expect(await fail(throttle, 'eve@example.com', '10.2.0.1')).to.equal(null);
  });

  it('limits one address over all accounts', async () => {
    const answers = await Promise.all(Array.from({ length: LOGIN_LIMITS.address.points + 5 }, (_, i) => fail(throttle, `user${i}@example.com`, '10.3.0.1')));
    expect(answers.filter((a) => a === null)).to.have.length(LOGIN_LIMITS.address.points);
    expect(await fail(throttle, 'new@example.com', '10.3.0.1')).to.be.a('number');
  });

  it('keeps neither email addresses nor client addresses in clear text', async () => {
    await fail(throttle, 'fay@example.com', '10.4.0.1');
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM svc_login_throttle');
    expect(rows.length).to.be.greaterThan(0);
    for (const { key } of rows) expect(key).to.not.match(/fay|10\.4/);
  });
});
