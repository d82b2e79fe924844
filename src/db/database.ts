// Opening the service's database: DATABASE_URL when set, else the embedded cluster of the project.
import path from 'node:path';
import type { Settings } from '../config/settings.js';
import type { Logger } from '../kernel/logger.js';
import { startEmbeddedPostgres } from './embedded.js';
import { connectClient, withDatabase } from './pool.js';

export interface DatabaseHandle {
  readonly url: string;
  readonly isEmbedded: boolean;
  /** Stops the embedded cluster; nothing for an external database. */
  stop(): Promise<void>;
}

const EMBEDDED_DATABASE = 'svc';

export async function openDatabase(settings: Settings, logger: Logger): Promise<DatabaseHandle> {
  if (settings.databaseUrl) return { url: settings.databaseUrl, isEmbedded: false, stop: async () => undefined };
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(settings.projectDir, '.svc', 'pgdata'),
    port: settings.embeddedPgPort,
    logger,
  });
  await ensureDatabase(embedded.url, EMBEDDED_DATABASE);
  return { url: withDatabase(embedded.url, EMBEDDED_DATABASE), isEmbedded: true, stop: () => embedded.stop() };
}

/** Creates the database if missing; a concurrent creator winning the race is fine. */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  const client = await connectClient({ connectionString: serverUrl });
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (rowCount === 0) {
      await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}
