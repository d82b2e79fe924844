// Login throttling: failed sign-ins counted in PostgreSQL (every worker sees the same counts) per
// account and address, per address, and per account; past a limit the answer is 429 with
// Retry-After, also for the right password. rate-limiter-flexible keeps the counters: one atomic
// upsert per count, fixed windows, and its own clean-up of expired rows.
import { createHash } from 'node:crypto';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Pool } from '../db/pool.js';
import { TooManyRequestsError } from '../kernel/errors.js';

/** The counters' table (db/0019_login_throttle.sql creates it with the library's columns). */
const TABLE = 'svc_login_throttle';

/**
 * The limits. An account and address pair gets 5 attempts in 15 minutes, or 1 while its account is
 * under attack (more than 50 failures in an hour from anywhere): a guesser spread over many
 * addresses gets one guess per address per window, and the owner, from an address of their own,
 * still gets theirs (no hard lock-out). One address gets 100 failures a day over all accounts.
 */
export const LOGIN_LIMITS = {
  pair: { points: 5, duration: 15 * 60, underAttackPoints: 1 },
  account: { points: 50, duration: 60 * 60 },
  address: { points: 100, duration: 24 * 60 * 60 },
} as const;

export const THROTTLED_MESSAGE = 'Too many failed sign-in attempts: try again after Retry-After seconds';

/** Counts one sign-in attempt before the password is checked, and forgives it when it succeeds. */
export interface LoginThrottle {
  /** Counts the attempt; throws TooManyRequestsError if it is over a limit. Answers what to call on success. */
  attempt(username: string, address: string): Promise<() => Promise<void>>;
}

/** SVC_LOGIN_THROTTLE=off: every attempt goes through. */
export const NO_LOGIN_THROTTLE: LoginThrottle = { attempt: async () => async () => undefined };

export function createLoginThrottle(pool: Pool): LoginThrottle {
  const limiter = (keyPrefix: string, { points, duration }: { points: number; duration: number }) =>
    new RateLimiterPostgres({ storeClient: pool, storeType: 'pool', tableName: TABLE, tableCreated: true, keyPrefix, points, duration });
  const pair = limiter('pair', LOGIN_LIMITS.pair);
  const account = limiter('account', LOGIN_LIMITS.account);
  const address = limiter('address', LOGIN_LIMITS.address);

  return {
    async attempt(username, client) {
      const keys = { pair: keyOf(username.toLowerCase(), client), account: keyOf(username.toLowerCase()), address: keyOf(client) };
      // Counted before bcrypt runs: concurrent guesses cannot all pass a check made before any failed.
      const [forPair, forAddress, forAccount] = await Promise.all([count(pair, keys.pair), count(address, keys.address), account.get(keys.account)]);
      const underAttack = (forAccount?.consumedPoints ?? 0) >= LOGIN_LIMITS.account.points;
      const pairLimit = underAttack ? LOGIN_LIMITS.pair.underAttackPoints : LOGIN_LIMITS.pair.points;
      const over = [forPair.consumedPoints > pairLimit ? forPair : null, forAddress.consumedPoints > LOGIN_LIMITS.address.points ? forAddress : null];
      if (over.some((res) => res !== null)) {
        const waitMs = Math.max(...over.map((res) => res?.msBeforeNext ?? 0));
        throw new TooManyRequestsError(THROTTLED_MESSAGE, Math.max(1, Math.ceil(waitMs / 1000)));
      }
      // Only attempts whose password gets checked count against the account: one address hammering
      // it does not cut every other address's allowance.
      await count(account, keys.account);
      return async () => {
        await Promise.all([pair.delete(keys.pair), account.reward(keys.account, 1), address.reward(keys.address, 1)]);
      };
    },
  };
}

/** One more attempt on a counter; the library rejects with the same RateLimiterRes past its points. */
async function count(limiter: RateLimiterPostgres, key: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (error) {
    if (error instanceof RateLimiterRes) return error;
    throw error;
  }
}

/** Hashed: the table holds neither email addresses nor client addresses in clear text. */
function keyOf(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex');
}
