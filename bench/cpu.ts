// CPU time spent by a job, in this process and in its PostgreSQL backends: on a shared machine a
// throughput figure moves with everything else running, while CPU per unit of work barely does.
import { readdir, readFile } from 'node:fs/promises';
import type { Pool } from '../src/db/pool.js';

/** Linux reports process times in clock ticks of 1/100 s (getconf CLK_TCK). */
const TICK_MS = 10;

export interface CpuSpent {
  /** This Node process (user + system). */
  clientMs: number;
  /** The pool's backends (user + system); null when the server's processes are not visible here. */
  databaseMs: number | null;
}

async function processTicks(pids: readonly number[]): Promise<number | null> {
  let total = 0;
  for (const pid of pids) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
    if (stat === null) return null;
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    total += Number(fields[11]) + Number(fields[12]);
  }
  return total;
}

/**
 * Starts counting the CPU of this process and of every backend serving `applicationName` (the pool
 * must already hold its connections: open them with a warm-up first). `stop` answers what was spent.
 */
export async function startCpuMeter(pool: Pool, applicationName: string): Promise<{ stop(): Promise<CpuSpent> }> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
  const pids = rows.map((row) => row.pid);
  const client = process.cpuUsage();
  const database = await processTicks(pids);
  return {
    async stop() {
      const used = process.cpuUsage(client);
      const after = await processTicks(pids);
      return {
        clientMs: (used.user + used.system) / 1000,
        databaseMs: database === null || after === null ? null : (after - database) * TICK_MS,
      };
    },
  };
}

/** Busy clock ticks of the whole machine (every core, every process: user, nice, system, irq, softirq, steal). */
async function machineBusyTicks(): Promise<number> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0]!;
  // Fields: user nice system idle iowait irq softirq steal; idle and iowait are not work.
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** Every PostgreSQL server process on the machine (postmaster, backends, background workers). */
async function postgresPids(): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name)).map(Number);
  const comms = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')));
  return pids.filter((_, index) => comms[index]!.trim() === 'postgres');
}

export interface MachineCpu {
  /** Busy time of the whole machine (autocannon and everything else running included). */
  machineMs: number;
  /** The server process. */
  serverMs: number | null;
  /** Every postgres process alive at the start (ones that exit meanwhile count as nothing). */
  postgresMs: number;
}

/** Starts counting the machine's busy CPU time, a server process's and PostgreSQL's; `stop` answers the milliseconds spent since. */
export async function startMachineCpuMeter(serverPid?: number): Promise<{ stop(): Promise<MachineCpu> }> {
  const postgres = await postgresPids();
  const ticksOf = async (pids: number[]) => {
    const all = await Promise.all(pids.map((pid) => processTicks([pid])));
    return all.map((t) => t ?? 0);
  };
  const [machine, server, database] = [await machineBusyTicks(), serverPid ? await processTicks([serverPid]) : null, await ticksOf(postgres)];
  return {
    async stop() {
      const [machineAfter, serverAfter, databaseAfter] = [
        await machineBusyTicks(),
        serverPid ? await processTicks([serverPid]) : null,
        await ticksOf(postgres),
      ];
      // A backend that exited reads as 0 afterwards: count it as nothing rather than negative.
      const postgresTicks = databaseAfter.reduce((sum, after, index) => sum + Math.max(0, after - database[index]!), 0);
      return {
        machineMs: (machineAfter - machine) * TICK_MS,
        serverMs: server === null || serverAfter === null ? null : (serverAfter - server) * TICK_MS,
        postgresMs: postgresTicks * TICK_MS,
      };
    },
  };
}
