// The service under load, as its own process: startService on a bench database, plus an optional bare reference app.
import type { Settings } from '../src/config/settings.js';
import { assertBuildIsCurrent } from '../scripts/buildCheck.js';
import type { ServiceConfig, ServiceReady } from './httpSupport.js';
import { captureListQuery, startModelsReference } from './referenceModels.js';
import { startJournalReference } from './referenceJournal.js';
import { startSseReference } from './referenceSse.js';

/**
 * The service's code as production runs it: the compiled dist/ (tsx leaves .js files alone), not
 * src/ through tsx, whose kept function names cost every closure a property array and measured
 * about a fifth fewer `hello` runs/s. The types still come from src/.
 */
assertBuildIsCurrent();
const { loadSettings } = (await import('../dist/config/settings.js' as string)) as typeof import('../src/config/settings.js');
const { createLogger } = (await import('../dist/kernel/logger.js' as string)) as typeof import('../src/kernel/logger.js');
const { loadProject, startService } = (await import('../dist/main.js' as string)) as typeof import('../src/main.js');

/** The list statement of the project's one model, as the service sends it. */
async function itemListQuery(projectDir: string, settings: Settings) {
  const model = (await loadProject(projectDir, settings)).models[0];
  if (!model) throw new Error(`the project in ${projectDir} has no model`);
  return captureListQuery(model);
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.BENCH_SERVICE_CONFIG ?? '{}') as ServiceConfig;
  // Only these settings: a stray SVC_* variable of the caller's shell must not change what is measured.
  const settings = loadSettings(
    { DATABASE_URL: config.databaseUrl, HOST: '127.0.0.1', PORT: '0', SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'info', ...config.env },
    config.projectDir,
  );
  const service = await startService(settings, createLogger(settings.logLevel));
  const listQuery = config.reference === 'models' ? await itemListQuery(config.projectDir, settings) : undefined;
  const reference = listQuery
    ? await startModelsReference(config.databaseUrl, settings.dbPoolSize, listQuery)
    : config.reference === 'sse'
      ? await startSseReference(config.databaseUrl, settings.dbPoolSize)
      : config.reference === 'journal'
        ? await startJournalReference(config.databaseUrl, settings.dbPoolSize)
        : undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await reference?.close().catch(() => undefined);
    await service.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  const ready: ServiceReady = {
    url: service.url,
    ...(reference ? { referenceUrl: reference.url } : {}),
    ...(listQuery ? { referenceNote: listQuery.text.replace(/\s+/g, ' ') } : {}),
  };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
