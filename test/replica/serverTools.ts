// The machine's PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) for tests that run servers
// of their own in a temporary folder: where the binaries are, and running one as the right user.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

/**
 * The newest /usr/lib/postgresql/N/bin holding pg_basebackup (or SVC_PG_BIN). Throws when there is
 * none: the suite fails rather than skips (CI runs it only where the binaries are).
 */
export function serverBinaries(): string {
  const named = process.env.SVC_PG_BIN;
  const candidates = named
    ? [named]
    : existsSync(PG_ROOT)
      ? readdirSync(PG_ROOT)
          .filter((version) => /^\d+$/.test(version))
          .sort((a, b) => Number(b) - Number(a))
          .map((version) => path.join(PG_ROOT, version, 'bin'))
      : [];
  const found = candidates.find((bin) => existsSync(path.join(bin, 'pg_basebackup')) && existsSync(path.join(bin, 'initdb')));
  if (!found) throw new Error(`no PostgreSQL server binaries (initdb, pg_basebackup, pg_ctl) under ${named ?? `${PG_ROOT}/*/bin`}`);
  return found;
}

/** PostgreSQL refuses to run as root: under root, every binary runs as the `postgres` user. */
export const isRoot = process.getuid?.() === 0;

/** A temporary folder the server binaries may write in (owned by `postgres` under root). */
export async function serverFolder(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  if (isRoot) await chown(dir, ...(await postgresIds()));
  return dir;
}

/** Runs the server binary `name` of `bin` in `cwd`; its output is in the error when it fails. */
export async function serverTool(bin: string, cwd: string, name: string, args: string[]): Promise<void> {
  const file = path.join(bin, name);
  const [command, commandArgs] = isRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
  try {
    await run(command, commandArgs, { cwd, timeout: 120_000 });
  } catch (error) {
    const { stderr = '', stdout = '' } = error as { stderr?: string; stdout?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${stderr || stdout}`, { cause: error });
  }
}

/** The uid and gid of the `postgres` user. */
export async function postgresIds(): Promise<[number, number]> {
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: group } = await run('id', ['-g', 'postgres']);
  return [Number(stdout.trim()), Number(group.trim())];
}
