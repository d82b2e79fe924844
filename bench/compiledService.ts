// The service as production runs it, for the benchmarks that measure its memory: the built `svc serve`.
import path from 'node:path';
import { assertBuildIsCurrent } from '../scripts/buildCheck.js';
import { freePort, SERVICE_LOG_LEVEL, startPeerProcess, type ChildServer, type ServiceConfig } from './httpSupport.js';
import { BENCH_DIR } from './support.js';

/**
 * Starts the built `svc serve` (bin/svc.js over dist/, as production runs it: no tsx, whose kept
 * function names give every closure a property array of its own) on a free loopback port.
 */
export async function startCompiledService(name: string, config: ServiceConfig): Promise<ChildServer> {
  const root = path.join(BENCH_DIR, '..');
  assertBuildIsCurrent();
  const port = await freePort();
  // Only these settings: a stray SVC_* variable of the caller's shell must not change what is measured.
  const unset = Object.fromEntries(
    Object.keys(process.env)
      .filter((key) => key.startsWith('SVC_') || key.startsWith('OTEL_'))
      .map((key) => [key, undefined]),
  );
  const env = {
    ...unset,
    DATABASE_URL: config.databaseUrl,
    HOST: '127.0.0.1',
    PORT: String(port),
    SVC_PROJECT_DIR: config.projectDir,
    SVC_LOG_LEVEL: SERVICE_LOG_LEVEL,
    ...config.env,
  };
  return startPeerProcess(`svc-${name}`, root, 'bin/svc.js', env, `http://127.0.0.1:${port}`, ['serve']);
}
