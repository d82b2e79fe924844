// Where a read goes: the primary, or a streaming replica (SVC_READ_DATABASE_URL) once it has replayed
// the WAL up to the reader's last write (a log sequence number, LSN), waiting a bounded time for it.
import type { Logger } from '../kernel/logger.js';
import { replicaReads } from '../metrics/registry.js';
import { isConnectionLoss } from './connectionLoss.js';
import { createPool, type Pool } from './pool.js';

/** An LSN as PostgreSQL writes it: two hexadecimal halves, `16/B374D848`. */
const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;
/** How often a waiting read asks the replica how far it has replayed (one question shared by every waiter). */
const POLL_MS = 10;
/** After the replica failed a read, reads go to the primary for this long before the replica is tried again. */
const DOWN_MS = 5000;

/** The LSN as a number (comparable), or undefined for text that is not one. */
export function parseLsn(text: string | undefined): bigint | undefined {
  const match = text === undefined ? null : LSN_TEXT.exec(text.trim());
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** `16/B374D848` for a number parseLsn answered. */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Where reads go: `reader` answers the pool that has everything up to an LSN. */
export interface ReadRouting {
  readonly primary: Pool;
  /** The replica's pool; undefined when no replica is configured (every read goes to the primary). */
  readonly replica: Pool | undefined;
  /** The pool to read from that has replayed `lsn` (undefined: the reader wrote nothing it must see). */
  reader(lsn: bigint | undefined): Promise<Pool>;
  /** The primary's WAL insert position now: at or past the commit of every transaction that has returned. */
  primaryLsn(): Promise<bigint>;
  /** A read on the replica failed: when its connection was lost or refused, the primary serves reads for a while. */
  reportFailure(error: unknown): void;
  close(): Promise<void>;
}

/** No replica: every read on the primary, nothing asked of the database. */
export function primaryOnly(primary: Pool): ReadRouting {
  return {
    primary,
    replica: undefined,
    reader: async () => primary,
    primaryLsn: async () => 0n,
    reportFailure: () => undefined,
    close: async () => undefined,
  };
}

export interface ReplicaOptions {
  primary: Pool;
  replicaUrl: string;
  poolSize: number;
  connectTimeoutMs: number;
  /** How long a read waits for the replica to replay its LSN before it reads the primary. */
  waitMs: number;
  logger: Logger;
}

/** Reads on a streaming replica, read-your-writes by LSN, the primary when the replica lags or fails. */
export class ReplicaRouting implements ReadRouting {
  readonly primary: Pool;
  readonly replica: Pool;
  /** The highest replay LSN the replica has answered: it only grows. */
  private replayed = 0n;
  private polling: Promise<bigint> | undefined;
  private isReportedDown = false;
  /** Until when reads skip a replica that just failed (a black-holed replica must not cost every read a connect timeout). */
  private downUntilMs = 0;

  constructor(private readonly options: ReplicaOptions) {
    this.primary = options.primary;
    this.replica = createPool({
      connectionString: options.replicaUrl,
      max: options.poolSize,
      applicationName: 'svc-reads',
      connectTimeoutMs: Math.min(options.connectTimeoutMs, 2000),
    });
  }

  async reader(lsn: bigint | undefined): Promise<Pool> {
    if (this.downUntilMs > Date.now()) return this.route('primary', 'unavailable');
    if (lsn === undefined || lsn <= this.replayed) return this.route('replica', 'current');
    const deadline = Date.now() + this.options.waitMs;
    try {
      for (;;) {
        if ((await this.replayedLsn()) >= lsn) return this.route('replica', 'waited');
        if (Date.now() + POLL_MS > deadline) return this.route('primary', 'lagging');
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    } catch (error) {
      this.markDown(error);
      return this.route('primary', 'unavailable');
    }
  }

  reportFailure(error: unknown): void {
    // A replay conflict cancels one query; the replica itself is fine.
    if (isConnectionLoss(error)) this.markDown(error);
  }

  private markDown(error: unknown): void {
    this.downUntilMs = Date.now() + DOWN_MS;
    if (this.isReportedDown) return;
    this.isReportedDown = true;
    this.options.logger.warn({ err: error }, `the read replica failed a read; reads go to the primary for ${DOWN_MS / 1000} s, then try it again`);
  }

  async primaryLsn(): Promise<bigint> {
    const { rows } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
    return parseLsn(rows[0]?.lsn) ?? 0n;
  }

  async close(): Promise<void> {
    await this.replica.end();
  }

  /**
   * How far the replica has replayed, one query however many reads wait. A server that is not in
   * recovery (a promoted replica, or a URL naming a primary) answers null: it has everything it will
   * ever get, so its own insert position stands in.
   */
  private replayedLsn(): Promise<bigint> {
    this.polling ??= this.replica
      .query<{ lsn: string }>('SELECT coalesce(pg_last_wal_replay_lsn(), pg_current_wal_insert_lsn())::text AS lsn')
      .then(({ rows }) => {
        const lsn = parseLsn(rows[0]?.lsn) ?? 0n;
        if (lsn > this.replayed) this.replayed = lsn;
        this.reportUp();
        return this.replayed;
      })
      .finally(() => (this.polling = undefined));
    return this.polling;
  }

  private route(target: 'replica' | 'primary', reason: 'current' | 'waited' | 'lagging' | 'unavailable'): Pool {
    replicaReads.inc({ target, reason });
    return target === 'replica' ? this.replica : this.primary;
  }

  private reportUp(): void {
    if (!this.isReportedDown) return;
    this.isReportedDown = false;
    this.options.logger.info('the read replica answers again');
  }
}
