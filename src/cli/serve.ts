// `svc serve`: one process, or a node cluster of SVC_WORKERS sharing one database; graceful on signals.
import cluster from 'node:cluster';
import { generateSigningKeyHex } from '../iam/keys.js';
import type { Settings } from '../config/settings.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import type { Logger } from '../kernel/logger.js';
import { startService } from '../main.js';
import { serveClusterScrapes } from '../metrics/scrape.js';

const DATABASE_URL_FOR_WORKERS = 'SVC_INTERNAL_DATABASE_URL';

export async function serve(settings: Settings, logger: Logger): Promise<void> {
  if (cluster.isPrimary && settings.workers > 1) return servePrimary(settings, logger);
  const inheritedUrl = process.env[DATABASE_URL_FOR_WORKERS];
  const database: DatabaseHandle | undefined = inheritedUrl ? { url: inheritedUrl, isEmbedded: false, stop: async () => undefined } : undefined;
  const service = await startService(settings, logger, database ? { database } : {});
  onShutdownSignal(logger, async () => {
    await service.close();
  });
}

/** The primary owns the database (embedded or not) and migrations; workers serve HTTP. */
async function servePrimary(settings: Settings, logger: Logger): Promise<void> {
  const database = await openDatabase(settings, logger);
  const pool = createPool({ connectionString: database.url, max: 2 });
  await migrate(pool);
  await pool.end();
  let stopping = false;
  // Workers must share one key, or a token minted by one fails on the others.
  const sharedKey = settings.signingKeyHex ? {} : { SVC_SIGNING_KEY: generateSigningKeyHex() };
  if (!settings.signingKeyHex) logger.warn('SVC_SIGNING_KEY is not set: workers share an ephemeral key; tokens die on restart');
  const fork = () => cluster.fork({ [DATABASE_URL_FOR_WORKERS]: database.url, ...sharedKey });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another');
    fork();
  });
  // One scrape of any worker shows them all: the primary gathers every worker's series.
  serveClusterScrapes();
  for (let i = 0; i < settings.workers; i++) fork();
  onShutdownSignal(logger, async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {});
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (!worker || worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.process.kill('SIGTERM');
          }),
      ),
    );
    await database.stop();
  });
}

function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>): void {
  let shuttingDown = false;
  const handler = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'shutting down');
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
