// Shared pieces of the event store tests: collecting a subscription, waiting, and a child-process appender.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Observable } from 'rxjs';
import { createPool, type Pool } from '../../src/db/pool.js';
import { EventStore, LogFollower, WakeUps, type RecordedEvent } from '../../src/eventstore/index.js';
import { createLogger } from '../../src/kernel/logger.js';
import { eventually } from '../support/http.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');

/**
 * Generous: a delivery that has not come within this is not coming. Far below a slow-poll node's
 * minute, so what such a node receives within it came from something else than its poll (a local
 * commit, a wake-up, the tail looking again).
 */
export const DELIVERY_DEADLINE_MS = 15_000;

/** Polls `check` every 20 ms until it answers true; fails after `timeoutMs` with `what`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  if (!(await eventually(check, timeoutMs)).ok) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** A running subscription that records what it receives. */
export interface Collector<T> {
  readonly items: T[];
  /** Resolves once `count` items arrived; rejects after `timeoutMs` naming how many did. */
  waitFor(count: number, timeoutMs: number): Promise<T[]>;
  stop(): void;
}

export function collect<T>(source: Observable<T>): Collector<T> {
  const items: T[] = [];
  let failure: unknown;
  const waiters = new Set<() => void>();
  const subscription = source.subscribe({
    next: (item) => {
      items.push(item);
      waiters.forEach((wake) => wake());
    },
    error: (error: unknown) => {
      failure = error;
      waiters.forEach((wake) => wake());
    },
  });
  return {
    items,
    waitFor(count, timeoutMs) {
      return new Promise<T[]>((resolve, reject) => {
        const check = (): void => {
          if (failure !== undefined) finish(() => reject(failure));
          else if (items.length >= count) finish(() => resolve(items));
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`expected ${count} items within ${timeoutMs} ms, got ${items.length}`))), timeoutMs);
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          settle();
        };
        waiters.add(check);
        check();
      });
    },
    stop: () => subscription.unsubscribe(),
  };
}

/** Stream positions of a list of events, for readable assertions. */
export function positionsOf(events: readonly RecordedEvent[]): number[] {
  return events.map((e) => e.streamPosition);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The kernel's event store wiring (main.ts) with the safety-net poll pushed out of reach. */
export interface SlowPollNode {
  pool: Pool;
  wakeUps: WakeUps;
  store: EventStore;
  follower: LogFollower;
  close(): Promise<void>;
}

/**
 * Builds pool, wake-ups, store and follower as startKernel does, but polling only once a minute:
 * whatever such a node delivers within a test came from a local commit or a NOTIFY.
 */
export async function startSlowPollNode(databaseUrl: string): Promise<SlowPollNode> {
  const logger = createLogger('silent');
  const pool = createPool({ connectionString: databaseUrl, max: 10 });
  const wakeUps = new WakeUps({ connectionString: databaseUrl, logger, pollIntervalMs: 60_000 });
  await wakeUps.start();
  let follower: LogFollower | undefined;
  const store = new EventStore({
    pool,
    onCommit: (events) => {
      follower?.publishLocal(events);
      wakeUps.announceCommit();
    },
  });
  follower = new LogFollower(store, wakeUps.wakes$, logger);
  await follower.start();
  const started = follower;
  return {
    pool,
    wakeUps,
    store,
    follower: started,
    async close() {
      started.stop();
      await wakeUps.close();
      await pool.end();
    },
  };
}

/** What the child process reports once its append committed. */
export interface ChildAppend {
  globalPosition: number;
  transactionId: string;
}

/**
 * Runs test/eventstore/appendInChild.ts in a separate Node process: it starts a kernel on
 * `databaseUrl`, appends one event to `streamId`, reports it and exits. The child is killed if it
 * has not exited after `timeoutMs`, so a hung child never outlives the test.
 */
export function appendInChildProcess(databaseUrl: string, streamId: string, timeoutMs = 15_000): Promise<ChildAppend> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'appendInChild.ts')], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl, APPEND_STREAM_ID: streamId, SVC_LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(killer);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || !line) {
        reject(new Error(`child exited with ${code ?? signal}; stdout: ${stdout}; stderr: ${stderr}`));
        return;
      }
      resolve(JSON.parse(line) as ChildAppend);
    });
  });
}
