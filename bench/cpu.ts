// CPU time spent by a job, in this process and in its PostgreSQL backends: on a shared machine a
// throughput figure moves with everything else running, while CPU per unit of work barely does.
import { readFile } from 'node:fs/promises';
import type { Pool } from '../src/db/pool.js';

/** Linux reports process times in clock ticks of 1/100 s (getconf CLK_TCK). */
const TICK_MS = 10;

export interface CpuSpent {
  /** This Node process (user + system). */
  clientMs: number;
  /** The pool's backends (user + system); null when the server's processes are not visible here. */
  databaseMs: number | null;
}

async function backendTicks(pids: readonly number[]): Promise<number | null> {
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
  const database = await backendTicks(pids);
  return {
    async stop() {
      const used = process.cpuUsage(client);
      const after = await backendTicks(pids);
      return {
        clientMs: (used.user + used.system) / 1000,
        databaseMs: database === null || after === null ? null : (after - database) * TICK_MS,
      };
    },
  };
}
