// Mocha global fixtures: a current build, one PostgreSQL (embedded unless a URL is given) and a migrated template per run.
import { assertBuildIsCurrent } from '../../scripts/buildCheck.js';
import { setUpTestCluster, tearDownTestCluster } from './db.js';

export async function mochaGlobalSetup(): Promise<void> {
  assertBuildIsCurrent();
  await setUpTestCluster();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await tearDownTestCluster();
}
