// Cross-process wake-ups: LISTEN/NOTIFY as a hint (never data), batched after commit, plus a slow poll.
import { randomUUID } from 'node:crypto';
import pgListen, { type Subscriber } from 'pg-listen';
import { Subject, type Observable } from 'rxjs';
import { connectionConfig } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { listenReconnects } from '../metrics/registry.js';

export const EVENTS_CHANNEL = 'svc_events';

/** Why readers were woken: something was appended, a poll tick, or the listener reconnected. */
export type WakeReason = 'local' | 'notify' | 'poll' | 'reconnect';

export interface WakeUpsOptions {
  connectionString: string;
  logger: Logger;
  /** The safety-net poll; NOTIFY can be lost across a reconnect or a gated late commit. */
  pollIntervalMs?: number;
}

/**
 * One LISTEN connection per process. `announceCommit()` wakes local readers at once and sends
 * at most one NOTIFY at a time: commits that land while one is in flight share the next.
 */
export class WakeUps {
  private readonly subject = new Subject<WakeReason>();
  private readonly reconnectSubject = new Subject<void>();
  private subscriber: Subscriber | undefined;
  /** Sent as the NOTIFY payload so this process can ignore its own wake-ups. */
  private readonly senderId = randomUUID();
  private connectedOnce = false;
  private notifyInFlight = false;
  private notifyPending = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private restartAttempt = 0;

  /** Emits on every wake-up; readers re-read from their own position. */
  readonly wakes$: Observable<WakeReason> = this.subject.asObservable();
  /** Emits after the LISTEN connection came back: in-memory views should reload. */
  readonly reconnected$: Observable<void> = this.reconnectSubject.asObservable();

  constructor(private readonly options: WakeUpsOptions) {}

  async start(): Promise<void> {
    await this.connect();
    const interval = this.options.pollIntervalMs ?? 2000;
    this.pollTimer = setInterval(() => this.subject.next('poll'), interval);
    this.pollTimer.unref();
  }

  announceCommit(): void {
    this.subject.next('local');
    if (this.notifyInFlight) {
      this.notifyPending = true;
      return;
    }
    void this.sendNotify();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    const subscriber = this.subscriber;
    this.subscriber = undefined;
    await subscriber?.close().catch(() => undefined);
    this.subject.complete();
    this.reconnectSubject.complete();
  }

  private async sendNotify(): Promise<void> {
    this.notifyInFlight = true;
    try {
      do {
        this.notifyPending = false;
        await this.subscriber?.notify(EVENTS_CHANNEL, this.senderId).catch((error: Error) => {
          this.options.logger.warn({ err: error }, 'NOTIFY failed; readers fall back to polling');
        });
      } while (this.notifyPending && !this.closed);
    } finally {
      this.notifyInFlight = false;
    }
  }

  private async connect(): Promise<void> {
    const { logger } = this.options;
    // pg-listen is CommonJS: its default export sits one level down under NodeNext typing.
    const subscriber = pgListen.default(connectionConfig(this.options.connectionString, 'svc-listen'), {
      paranoidChecking: 10_000,
      retryLimit: Number.POSITIVE_INFINITY,
      retryTimeout: Number.POSITIVE_INFINITY,
      // Jittered exponential backoff, capped at 10 s.
      retryInterval: (attempt) => Math.min(10_000, 200 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2),
    });
    subscriber.notifications.on(EVENTS_CHANNEL, () => undefined);
    subscriber.events.on('notification', (notification) => {
      if (notification.payload !== this.senderId) this.subject.next('notify');
    });
    subscriber.events.on('reconnect', (attempt) => logger.warn({ attempt }, 'LISTEN connection lost; reconnecting'));
    subscriber.events.on('connected', () => {
      void this.afterConnected(subscriber);
    });
    subscriber.events.on('error', (error) => {
      // pg-listen gave up on this connection: start a fresh one rather than go deaf.
      logger.error({ err: error }, 'LISTEN connection failed');
      void this.restart(subscriber);
    });
    this.subscriber = subscriber;
    await subscriber.connect();
    await subscriber.listenTo(EVENTS_CHANNEL);
    this.connectedOnce = true;
  }

  private async afterConnected(subscriber: Subscriber): Promise<void> {
    if (this.subscriber !== subscriber || !this.connectedOnce) return; // the first connect
    this.options.logger.info('LISTEN connection restored');
    listenReconnects.inc();
    this.reconnectSubject.next();
    this.subject.next('reconnect');
  }

  private async restart(failed: Subscriber): Promise<void> {
    if (this.closed || this.subscriber !== failed) return;
    await failed.close().catch(() => undefined);
    const delay = Math.min(10_000, 500 * 2 ** Math.min(this.restartAttempt++, 5));
    await new Promise((resolve) => setTimeout(resolve, delay));
    if (this.closed) return;
    try {
      await this.connect();
      this.restartAttempt = 0;
      this.reconnectSubject.next();
      this.subject.next('reconnect');
    } catch (error) {
      this.options.logger.error({ err: error }, 'LISTEN reconnect failed; retrying');
      if (this.subscriber) void this.restart(this.subscriber);
    }
  }
}
