// The fault suite's two profiles: fast inside `npm test`, full with FAULTS_PROFILE=full (`npm run test:faults`).
const FULL = process.env.FAULTS_PROFILE === 'full';

export const PROFILE = {
  name: FULL ? 'full' : 'fast',
  /** Slow runs in flight when a worker is killed mid-step. */
  runsInFlight: FULL ? 120 : 30,
  /** Kills of a worker under a tight loop of triggers (mid-commit). */
  commitKills: FULL ? 6 : 1,
  /** Clients triggering back to back. */
  clients: FULL ? 8 : 4,
  /** Rounds of a repeated fault (terminated backends, a killed LISTEN connection, disconnecting clients). */
  rounds: FULL ? 40 : 10,
  /** How long the database refuses connections. */
  refusalMs: FULL ? 10_000 : 2_500,
  /** How long a write transaction is held open while runs go on. */
  heldMs: FULL ? 15_000 : 2_500,
  /** Races run side by side: approvals decided on both workers, Idempotency-Keys sent 20 times to both. */
  raceRounds: FULL ? 20 : 3,
  /** Seconds an every-second schedule ticks on both workers. */
  raceTicks: FULL ? 30 : 4,
  /** Runs started at once for one concurrency limit of 2. */
  raceRuns: FULL ? 60 : 10,
  /** The deadline for every run to end after the fault is gone. */
  settleMs: FULL ? 120_000 : 45_000,
};
