// Read-your-writes over a read replica: after a write the client gets the primary's LSN in
// X-Svc-Lsn (the TypeScript client sends it back on every request) and this process remembers it
// for the principal; a read then waits for the replica to replay the higher of the two, bounded,
// else reads the primary. Without SVC_READ_DATABASE_URL every read is the primary's, as before.
import type { Request, RequestHandler, Response } from 'express';
import { Router } from 'express';
import { LRUCache } from 'lru-cache';
import { isConnectionLoss } from '../db/connectionLoss.js';
import type { Pool } from '../db/pool.js';
import { formatLsn, parseLsn, type ReadRouting } from '../db/readRouting.js';
import type { Principal } from '../kernel/access.js';
import { NotFoundError } from '../kernel/errors.js';
import { replicaReads } from '../metrics/registry.js';

/** The response header naming the primary's LSN after a write, and the request header echoing it. */
export const LSN_HEADER = 'X-Svc-Lsn';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Principals remembered per process; an entry only matters until the replica has replayed it. */
const REMEMBERED = { max: 50_000, ttlMs: 10 * 60_000 };
/** A standby cancels a read that conflicts with replay (SQLSTATE 40001): the primary answers it instead. */
const REPLAY_CONFLICT = '40001';

/** A replica read that the primary should answer instead: the replica is gone, or cancelled the query for replay. */
export function isReplicaFailure(error: unknown): boolean {
  return isConnectionLoss(error) || (error as { code?: unknown }).code === REPLAY_CONFLICT;
}

const principalKey = (principal: Principal | undefined) => (principal ? `${principal.tenant ?? ''}\u0000${principal.userId}` : undefined);

/** Where a request's reads go, and the write tracking that makes them see the request's own writes. */
export class Reads {
  readonly primary: Pool;
  private readonly positions: LRUCache<string, bigint> | undefined;

  constructor(private readonly routing: ReadRouting) {
    this.primary = routing.primary;
    if (routing.replica) this.positions = new LRUCache<string, bigint>({ max: REMEMBERED.max, ttl: REMEMBERED.ttlMs });
  }

  /** The router that stamps every write's response with the primary's LSN; none without a replica. */
  writeTracker(): Router[] {
    if (!this.positions) return [];
    const router = Router();
    router.use(this.trackWrites);
    return [router];
  }

  /** The pool this request's reads use: the replica once it has what the client last wrote, else the primary. */
  async db(req: Request): Promise<Pool> {
    if (!this.positions) return this.primary;
    const echoed = parseLsn(req.get(LSN_HEADER));
    const key = principalKey(req.principal);
    const remembered = key === undefined ? undefined : this.positions.get(key);
    const required = echoed === undefined ? remembered : remembered === undefined || echoed > remembered ? echoed : remembered;
    return this.routing.reader(required);
  }

  /**
   * `read` on the request's pool, and the pool that answered (later reads of the request use it). A
   * miss on the replica (undefined, or NotFoundError: a row written by another client moments ago,
   * or before the client kept its LSN), a lost replica or a replay conflict is read again on the primary.
   */
  async read<T>(req: Request, read: (db: Pool) => Promise<T>): Promise<{ value: T; db: Pool }> {
    const db = await this.db(req);
    if (db === this.primary) return { value: await read(db), db };
    try {
      const value = await read(db);
      if (value !== undefined) return { value, db };
    } catch (error) {
      const isFailure = isReplicaFailure(error);
      if (!isFailure && !(error instanceof NotFoundError)) throw error;
      if (isFailure) this.routing.reportFailure(error);
      replicaReads.inc({ target: 'primary', reason: isFailure ? 'unavailable' : 'missed' });
      return { value: await read(this.primary), db: this.primary };
    }
    replicaReads.inc({ target: 'primary', reason: 'missed' });
    return { value: await read(this.primary), db: this.primary };
  }

  /** A read on the replica failed: the primary serves reads for a while (see ReadRouting.reportFailure). */
  reportFailure(error: unknown): void {
    this.routing.reportFailure(error);
  }

  /**
   * After a write request's handler is done (its commits returned), the primary's insert LSN goes
   * into the response and this process's memory of the principal. The response waits for that one
   * query; a response whose head is already out (a stream) is left alone, and so is a refusal (4xx,
   * 5xx: nothing to read back, and a 503 for a database outage must not wait for the database).
   */
  private readonly trackWrites: RequestHandler = (req, res, next) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const end = res.end;
    const deferredEnd = (...args: unknown[]): Response => {
      res.end = end;
      if (res.headersSent || res.statusCode >= 400) return (end as (...a: unknown[]) => Response).apply(res, args);
      void this.routing
        .primaryLsn()
        .then(
          (lsn) => this.stamp(req, res, lsn),
          () => undefined,
        )
        .finally(() => (end as (...a: unknown[]) => Response).apply(res, args));
      return res;
    };
    res.end = deferredEnd as Response['end'];
    next();
  };

  private stamp(req: Request, res: Response, lsn: bigint): void {
    if (lsn === 0n) return;
    if (!res.headersSent) res.setHeader(LSN_HEADER, formatLsn(lsn));
    const key = principalKey(req.principal);
    if (key === undefined || !this.positions) return;
    const known = this.positions.get(key);
    if (known === undefined || lsn > known) this.positions.set(key, lsn);
  }
}
