// Users written before personal data was sealed: their values are appended again, sealed, so they sign in and read.
import type { Pool } from '../db/pool.js';
import { runCommand } from '../eventstore/command.js';
import type { NewEvent, RecordedEvent } from '../eventstore/types.js';
import type { Clock } from '../kernel/clock.js';
import type { Logger } from '../kernel/logger.js';
import { federatedIdentity, uniqueStream, userStream, type UserEvent } from './events.js';
import { evolveUser, initialUser, type UserState } from './evolve.js';
import type { IamCommands } from './handlers.js';
import { claim, type Decision } from './rules.js';

/**
 * Rows of iam_users holding a clear email (no blind index) come from events written before this
 * version. For each, a `UserUpdated` (and `UserFederationLinked`) with the current values is appended
 * through the sealing store: the read model then holds them sealed with blind indexes, and the
 * claims are taken under their blind names. The old events keep the clear text: crypto-shredding
 * cannot reach it (docs/privacy.md says so).
 */
export async function sealLegacyUsers(pool: Pool, commands: IamCommands, clock: Clock, logger: Logger): Promise<number> {
  const { rows } = await pool.query<{ id: string; federated_provider: string | null }>(
    "SELECT id, federated_provider FROM iam_users WHERE email_index IS NULL AND email IS NOT NULL AND email NOT LIKE 'enc:v1:%' ORDER BY id",
  );
  for (const row of rows) await sealOne(commands, row.id, clock.now().toISOString());
  if (rows.length > 0)
    logger.warn(
      { users: rows.length },
      'sealed the personal values of users written before personal data was encrypted (their old events keep the clear text)',
    );
  return rows.length;
}

async function sealOne(commands: IamCommands, userId: string, at: string): Promise<void> {
  const store = commands.personal;
  const stream = userStream(userId);
  const user = foldUser(await store.readWholeStream(stream));
  if (!user.exists || user.isDeleted || user.isErased || user.email === null) return;
  const claims = [
    uniqueStream('email', user.email),
    ...(user.phoneNumber ? [uniqueStream('phone', user.phoneNumber)] : []),
    ...(user.federatedIdentity ? [uniqueStream('federated-identity', user.federatedIdentity)] : []),
  ];
  await runCommand(store, {
    streams: [stream, ...claims],
    decide: (read) => {
      const owners = Object.fromEntries(claims.map((c) => [c, ownerOf(read.get(c)!)]));
      const decision: Decision = {};
      claim(decision, owners, 'email', user.email!, userId, at, 'A user with email');
      if (user.phoneNumber) claim(decision, owners, 'phone', user.phoneNumber, userId, at, 'A user with phone number');
      if (user.federatedIdentity) claim(decision, owners, 'federated-identity', user.federatedIdentity, userId, at, 'An account for the identity');
      const events: NewEvent[] = [{ type: 'UserUpdated', data: { userId, email: user.email!, phoneNumber: user.phoneNumber, at } }];
      const [provider, ...subject] = user.federatedIdentity?.split(' ') ?? [];
      if (provider && subject.length > 0) {
        const sub = subject.join(' ');
        if (federatedIdentity(provider, sub) === user.federatedIdentity)
          events.push({ type: 'UserFederationLinked', data: { userId, provider, subject: sub, email: user.email!, at } });
      }
      decision[stream] = events;
      return { events: decision, result: undefined };
    },
    metadata: { actor: { type: 'system', id: 'svc' }, source: 'executor' },
  });
}

const foldUser = (events: RecordedEvent[]): UserState => events.reduce((s, e) => evolveUser(s, e as unknown as UserEvent), initialUser);
const ownerOf = (events: RecordedEvent[]): string | null =>
  events.reduce<string | null>((owner, e) => (e.type === 'UniqueValueClaimed' ? String(e.data.owner) : e.data.owner === owner ? null : owner), null);
