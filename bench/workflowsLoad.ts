// The workflows benchmark's load: the `hello` body at 50 connections, 201 and 202 jobs, machine CPU per run.
import { fmtInt, fmtMs } from './support.js';
import { startMachineCpuMeter } from './cpu.js';
import { describeFailures, runLoad, WARM_UP_S, waitUntilZero, type LoadOptions, type LoadResult } from './httpSupport.js';

export const CONNECTIONS = 50;
export const BODY = JSON.stringify({ name: 'world', values: [1, 2, 3, 4, 5] });

/** A 201 job: the load and the machine's CPU per answered run over its measured window. */
export interface SyncJob {
  load: LoadResult;
  /** The whole machine's busy time per answered run. */
  cpuMsPerRun: number;
  /** The server process's and PostgreSQL's shares of it (null: the server's pid is unknown). */
  serverMsPerRun: number | null;
  postgresMsPerRun: number;
}

export interface Target {
  sync: SyncJob;
  async: LoadResult;
  /** Runs completed per second over the 202 load plus the drain after it. */
  completedPerS: number;
  drainMs: number;
}

/** Hooks that differ between svc and the peer: where to send, how to count runs. */
export interface Subject {
  label: string;
  serverPid?: number;
  syncUrl: string;
  asyncUrl: string;
  pending(): Promise<number>;
  completed(): Promise<number>;
}

const post = (url: string): LoadOptions => ({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY, connections: CONNECTIONS });

/** Warm-up, then the measured 201 load with the machine's CPU counted over it. */
export async function measureSync(url: string, label: string, serverPid?: number): Promise<SyncJob> {
  if (WARM_UP_S > 0) await runLoad({ ...post(url), durationS: WARM_UP_S });
  const cpu = await startMachineCpuMeter(serverPid);
  const load = await runLoad(post(url));
  const spent = await cpu.stop();
  const runs = Math.max(1, load.ok2xx);
  const job = {
    load,
    cpuMsPerRun: spent.machineMs / runs,
    serverMsPerRun: spent.serverMs === null ? null : spent.serverMs / runs,
    postgresMsPerRun: spent.postgresMs / runs,
  };
  console.error(
    `    ${label} 201: ${fmtInt(load.rps)} req/s, p50 ${fmtMs(load.p50)} ms, p99 ${fmtMs(load.p99)} ms (${describeFailures(load)}); CPU ms per run: ` +
      `machine ${fmtMs(job.cpuMsPerRun)}, server ${job.serverMsPerRun === null ? '-' : fmtMs(job.serverMsPerRun)}, postgres ${fmtMs(job.postgresMsPerRun)}`,
  );
  return job;
}

export async function measure(subject: Subject): Promise<Target> {
  const sync = await measureSync(subject.syncUrl, subject.label, subject.serverPid);
  if (WARM_UP_S > 0) await runLoad({ ...post(subject.asyncUrl), durationS: WARM_UP_S });
  await waitUntilZero(subject.pending);
  const before = await subject.completed();
  const started = performance.now();
  const accepted = await runLoad(post(subject.asyncUrl));
  const loadEnded = performance.now();
  const drainMs = await waitUntilZero(subject.pending);
  const completed = (await subject.completed()) - before;
  const completedPerS = completed / ((performance.now() - started) / 1000);
  console.error(
    `    ${subject.label} 202: ${fmtInt(accepted.rps)} req/s, p99 ${fmtMs(accepted.p99)} ms (${describeFailures(accepted)}); ` +
      `${fmtInt(completedPerS)} completed/s, drain ${fmtInt(drainMs)} ms after ${fmtInt(loadEnded - started)} ms of load`,
  );
  return { sync, async: accepted, completedPerS, drainMs };
}
