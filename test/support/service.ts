// Starting the real service (or only its kernel) on a test database, over real HTTP on loopback.
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadSettings, type Settings } from '../../src/config/settings.js';
import { createLogger } from '../../src/kernel/logger.js';
import { startKernel, startService, type Kernel, type Service, type ServiceOptions } from '../../src/main.js';
import { createTestDatabase } from './db.js';

export interface TestEnv {
  [name: string]: string | undefined;
}

/** A project folder with nothing in it: the default for tests that bring no workflows or models. */
export function emptyProjectDir(): string {
  const dir = path.join(tmpdir(), 'svc-empty-project');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Settings as the service would read them, on the given database, port 0, silent logs, and no audit
 * checkpoint timer (a checkpoint is an event: tests that count events would race it).
 */
export function testSettings(databaseUrl: string, env: TestEnv = {}, projectDir?: string): Settings {
  return loadSettings(
    { DATABASE_URL: databaseUrl, PORT: '0', SVC_LOG_LEVEL: process.env.SVC_TEST_LOG_LEVEL ?? 'silent', SVC_AUDIT_CHECKPOINT_SECONDS: '0', ...env },
    projectDir ?? emptyProjectDir(),
  );
}

export async function startTestKernel(options: { databaseUrl?: string; env?: TestEnv } & Omit<ServiceOptions, 'routers'> = {}): Promise<Kernel> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const settings = testSettings(databaseUrl, options.env);
  return startKernel(settings, createLogger(settings.logLevel), options);
}

export async function startTestService(options: { databaseUrl?: string; env?: TestEnv; projectDir?: string } & ServiceOptions = {}): Promise<Service> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase());
  const settings = testSettings(databaseUrl, options.env, options.projectDir);
  return startService(settings, createLogger(settings.logLevel), options);
}
