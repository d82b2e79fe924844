// Users' personal values in the log: sealed on append, opened on read, claimed by blind index.
import type { EventStore } from '../eventstore/store.js';
import type { AppendOptions } from '../eventstore/transaction.js';
import type { AppendResult, AppendToStream, NewEvent, RecordedEvent } from '../eventstore/types.js';
import type { DataKeys } from '../privacy/dataKeys.js';
import { userSubject } from '../privacy/dataKeys.js';
import { federatedIdentity } from './events.js';

/** Claim streams named by a personal value; a role name is not personal and stays as it is. */
const PERSONAL_CLAIM = /^unique-(email|phone|federated-identity):(.*)$/s;
const USER_STREAM = /^user-(.+)$/;

/**
 * The store IAM commands read and append through. Deciders keep working on clear values; what
 * reaches the events table is sealed (email, phone number, federated subject: AES-256-GCM with the
 * user's data key) plus keyed blind indexes (`emailIndex`, `phoneIndex`, `federatedIndex`) the read
 * model looks accounts up by. A unique-value claim stream is named by the blind index of its value.
 */
export class PersonalUserStore {
  constructor(
    private readonly store: EventStore,
    readonly keys: DataKeys,
  ) {}

  async readWholeStream(streamId: string): Promise<RecordedEvent[]> {
    const events = await this.store.readWholeStream(await this.streamName(streamId));
    return USER_STREAM.test(streamId) ? this.keys.openDeep(events) : events;
  }

  async append(streams: AppendToStream | readonly AppendToStream[], options: AppendOptions = {}): Promise<AppendResult> {
    const requests = Array.isArray(streams) ? (streams as readonly AppendToStream[]) : [streams as AppendToStream];
    const sealed = await Promise.all(
      requests.map(async (request) => {
        const userId = USER_STREAM.exec(request.streamId)?.[1];
        const events = userId === undefined ? request.events : await Promise.all(request.events.map((event) => this.sealEvent(userId, event)));
        return { ...request, streamId: await this.streamName(request.streamId), events };
      }),
    );
    return this.store.append(sealed, options);
  }

  /** The stored name of a stream: personal claim streams by blind index (`unique-email:#<hmac>`). */
  async streamName(streamId: string): Promise<string> {
    const match = PERSONAL_CLAIM.exec(streamId);
    return match ? `unique-${match[1]}:#${await this.keys.blindIndex(match[1]!, match[2]!)}` : streamId;
  }

  emailIndex(email: string): Promise<string> {
    return this.keys.blindIndex('email', email.toLowerCase());
  }

  phoneIndex(phone: string): Promise<string> {
    return this.keys.blindIndex('phone', phone);
  }

  federatedIndex(provider: string, subject: string): Promise<string> {
    return this.keys.blindIndex('federated-identity', federatedIdentity(provider, subject));
  }

  private async sealEvent(userId: string, event: NewEvent): Promise<NewEvent> {
    if (event.type !== 'UserCreated' && event.type !== 'UserUpdated' && event.type !== 'UserFederationLinked') return event;
    const data = event.data as Record<string, unknown>;
    const subject = userSubject(userId);
    const text = (value: unknown) => (typeof value === 'string' ? value : null);
    const sealed: Record<string, unknown> = { ...data };
    const email = text(data.email);
    if (email !== null) Object.assign(sealed, { email: await this.keys.seal(subject, email), emailIndex: await this.emailIndex(email) });
    if (data.phoneNumber !== undefined) {
      const phone = text(data.phoneNumber);
      sealed.phoneNumber = phone === null ? null : await this.keys.seal(subject, phone);
      sealed.phoneIndex = phone === null ? null : await this.phoneIndex(phone);
    }
    const [provider, sub] =
      event.type === 'UserFederationLinked' ? [text(data.provider), text(data.subject)] : [text(data.federatedProvider), text(data.federatedSub)];
    const federated =
      provider !== null && sub !== null ? { index: await this.federatedIndex(provider, sub), sealed: await this.keys.seal(subject, sub) } : null;
    if (event.type === 'UserFederationLinked') Object.assign(sealed, { subject: federated?.sealed ?? null, federatedIndex: federated?.index ?? null });
    if (event.type === 'UserCreated') Object.assign(sealed, { federatedSub: federated?.sealed ?? null, federatedIndex: federated?.index ?? null });
    return { ...event, data: sealed as NewEvent['data'] };
  }
}
