// The database round trip of GET /health, on a connection of its own.
import type pg from 'pg';
import { connectClient } from './pool.js';

/**
 * One connection that only answers "is the database answering?". Through the pool, a liveness probe
 * would queue behind the traffic (thousands of streams opening, a burst of runs) and, past its
 * timeout, report a busy service as down. Connected on first use; a ping that fails or times out
 * drops it, and the next ping connects again.
 */
export class DatabaseProbe {
  private client: Promise<pg.Client> | undefined;
  private isClosed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  /** Whether `SELECT 1` answered within `timeoutMs`. */
  async ping(timeoutMs: number): Promise<boolean> {
    if (this.isClosed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      const answered = await Promise.race([this.selectOne(), timeout]);
      if (!answered) this.drop();
      return answered;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.isClosed = true;
    await this.drop();
  }

  private async selectOne(): Promise<boolean> {
    try {
      this.client ??= connectClient(this.config);
      await (await this.client).query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /** Forgets the connection and ends it (not waited for by a ping: a hung server may never answer). */
  private drop(): Promise<void> {
    const dropped = this.client;
    this.client = undefined;
    return dropped?.then((client) => client.end()).catch(() => undefined) ?? Promise.resolve();
  }
}
