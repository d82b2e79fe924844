// The kernel: everything below HTTP, in the order data flows: database -> migrations -> projections -> event store -> wake-ups.
import type { Settings } from '../config/settings.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { connectionConfig, createPool, type Pool } from '../db/pool.js';
import { DatabaseProbe } from '../db/probe.js';
import { primaryOnly, ReplicaRouting, type ReadRouting } from '../db/readRouting.js';
import { backfillEventHashes, EventStore, HorizonWatch, LogFollower, WakeUps } from '../eventstore/index.js';
import type { Logger } from '../kernel/logger.js';
import { ProjectionRegistry, rebuildStaleProjections, type RowProjection } from '../projections/index.js';
import { featureProjections } from './project.js';

export interface Kernel {
  readonly settings: Settings;
  readonly logger: Logger;
  readonly database: DatabaseHandle;
  readonly pool: Pool;
  /** Where reads that may use the replica (SVC_READ_DATABASE_URL) go; the primary when none is set. */
  readonly reads: ReadRouting;
  readonly registry: ProjectionRegistry;
  readonly wakeUps: WakeUps;
  readonly store: EventStore;
  readonly follower: LogFollower;
  readonly horizon: HorizonWatch;
  /** GET /health's round trip, on a connection of its own (never queued behind the pool). */
  readonly probe: DatabaseProbe;
  close(): Promise<void>;
}

export interface KernelOptions {
  /** An already opened database (tests, cluster workers); else DATABASE_URL or the embedded one. */
  database?: DatabaseHandle;
  projections?: RowProjection[];
  migrate?: boolean;
  /** Runs after the migrations, before projections are checked (model tables). */
  prepare?: (pool: Pool) => Promise<void>;
}

/** Everything below HTTP: database, migrations, projections, event store, wake-ups. */
export async function startKernel(settings: Settings, logger: Logger, options: KernelOptions = {}): Promise<Kernel> {
  const database = options.database ?? (await openDatabase(settings, logger));
  const pool = createPool({ connectionString: database.url, max: settings.dbPoolSize, connectTimeoutMs: settings.dbConnectTimeoutMs });
  try {
    if (options.migrate !== false) {
      const applied = await migrate(pool);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
      await backfillEventHashes(pool, logger);
    }
    await options.prepare?.(pool);
    const registry = new ProjectionRegistry();
    for (const projection of options.projections ?? featureProjections()) registry.register(projection);
    await rebuildStaleProjections(pool, registry, logger);

    const wakeUps = new WakeUps({ connectionString: database.url, logger });
    await wakeUps.start();
    let follower: LogFollower | undefined;
    const store = new EventStore({
      pool,
      projector: registry,
      onCommit: (events) => {
        follower?.publishLocal(events);
        wakeUps.announceCommit();
      },
    });
    follower = new LogFollower(store, wakeUps.wakes$, logger);
    await follower.start();
    const started = follower;
    const horizon = new HorizonWatch(pool, logger, settings.horizonStallSeconds * 1000);
    horizon.start();
    const reads = readRouting(settings, logger, pool);
    const probe = new DatabaseProbe(connectionConfig(database.url, 'svc-health'));
    return {
      settings,
      logger,
      database,
      pool,
      reads,
      registry,
      wakeUps,
      store,
      follower: started,
      horizon,
      probe,
      async close() {
        horizon.stop();
        await probe.close();
        started.stop();
        await wakeUps.close();
        await reads.close();
        await pool.end();
        if (!options.database) await database.stop();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (!options.database) await database.stop().catch(() => undefined);
    throw error;
  }
}

/** A replica's routing when SVC_READ_DATABASE_URL is set (its pool opens connections on first use). */
function readRouting(settings: Settings, logger: Logger, primary: Pool): ReadRouting {
  if (settings.readDatabaseUrl === undefined) return primaryOnly(primary);
  return new ReplicaRouting({
    primary,
    replicaUrl: settings.readDatabaseUrl,
    poolSize: settings.dbPoolSize,
    connectTimeoutMs: settings.dbConnectTimeoutMs,
    waitMs: settings.readReplicaWaitMs,
    logger,
  });
}
