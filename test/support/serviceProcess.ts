// `svc serve` and the `svc` CLI as child processes on loopback (a real second process on the same
// database, or one killed on purpose), with short run leases; and killing what a test file left running.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePort } from './db.js';
import { eventually } from './http.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The key every service process signs with unless its env names another; an in-process service of the
 * same test passes it too, so a token minted by one is good on all of them.
 */
export const PROCESS_SIGNING_KEY = '86ab142b932cb7de9ec648af88e9453314c92f4cfe3f8f3da09ebf475f8b2919';
export const LEASE_MS = 1500;
export const CLAIM_INTERVAL_MS = 200;

/** Only what the child needs: the developer's own settings cannot leak in. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    HOST: '127.0.0.1',
    SVC_SIGNING_KEY: PROCESS_SIGNING_KEY,
    SVC_LOG_LEVEL: 'warn',
    SVC_RUN_LEASE_MS: String(LEASE_MS),
    SVC_RUN_CLAIM_INTERVAL_MS: String(CLAIM_INTERVAL_MS),
    // A checkpoint is an event: tests that count events would race the timer.
    SVC_AUDIT_CHECKPOINT_SECONDS: '0',
    ...extra,
  };
}

/**
 * The compiled CLI, as `npm start` runs it (no TypeScript loader registered): it starts in a
 * fraction of the time tsx takes to compile the sources again in every child. The suite's global
 * setup refuses to run on a dist/ older than src/ (scripts/buildCheck.ts).
 */
export const CLI_ENTRY = 'bin/svc.js';

/** A `svc serve` child process on loopback. */
export class ServiceProcess {
  output = '';
  readonly exited: Promise<void>;

  private constructor(
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.output += chunk));
    this.exited = once(child, 'exit').then(() => undefined);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Spawns the service and waits for /health (fails with its output when it does not come up). */
  static async start(databaseUrl: string, projectDir: string, env: Record<string, string> = {}): Promise<ServiceProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [CLI_ENTRY, 'serve'], {
      cwd: REPO,
      env: childEnv({ DATABASE_URL: databaseUrl, PORT: String(port), SVC_PROJECT_DIR: projectDir, ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`);
    running.add(service);
    const up = await eventually(
      async () => {
        if (!service.isRunning) return true;
        return fetch(`${service.url}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      // Generous: six processes starting at once under the parallel suite on 2 cores took over 30 s.
      60_000,
      50,
    );
    if (!up.ok || !service.isRunning) {
      await service.kill();
      expect.fail(`the service did not come up:\n${service.output}`);
    }
    return service;
  }

  /** SIGKILL (a crash) by default; waits until the process is gone. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.isRunning) this.child.kill(signal);
    await this.exited;
    running.delete(this);
  }

  /** SIGTERM, then SIGKILL if it does not leave within `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.isRunning) return this.kill();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    running.delete(this);
  }
}

const running = new Set<ServiceProcess>();

/** For after hooks: every service a test file started and did not stop. */
export async function killAllServices(): Promise<void> {
  await Promise.all([...running].map((service) => service.kill()));
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the `svc` CLI to the end (SIGKILL after `timeoutMs`). */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI_ENTRY, ...args], { cwd: REPO, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  try {
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}
