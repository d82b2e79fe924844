// Mocha global fixtures: one PostgreSQL (embedded unless a URL is given) and a migrated template per run.
import { setUpTestCluster, tearDownTestCluster } from './db.js';

export async function mochaGlobalSetup(): Promise<void> {
  await setUpTestCluster();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await tearDownTestCluster();
}
