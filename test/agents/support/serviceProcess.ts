// `svc serve` as a child process (to crash it with SIGKILL), on loopback, with short run leases.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { expect } from 'chai';
import { freePort } from '../../support/db.js';
import { eventually } from '../../support/http.js';
import { REPO, SIGNING_KEY } from './harness.js';

export const LEASE_MS = 1500;
export const CLAIM_INTERVAL_MS = 200;

const running = new Set<ServiceProcess>();

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

  get isRunning(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(env: Record<string, string>): Promise<ServiceProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
      cwd: REPO,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        PORT: String(port),
        SVC_SIGNING_KEY: SIGNING_KEY,
        SVC_LOG_LEVEL: 'warn',
        SVC_RUN_LEASE_MS: String(LEASE_MS),
        SVC_RUN_CLAIM_INTERVAL_MS: String(CLAIM_INTERVAL_MS),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const service = new ServiceProcess(child, `http://127.0.0.1:${port}`);
    running.add(service);
    const up = await eventually(
      async () => !service.isRunning || (await fetch(`${service.url}/health`).then((r) => r.ok, () => false)),
      30_000,
      50,
    );
    if (!up.ok || !service.isRunning) {
      await service.kill();
      expect.fail(`the service did not come up:\n${service.output}`);
    }
    return service;
  }

  /** SIGKILL: a crash, no cleanup of any kind. */
  async kill(): Promise<void> {
    if (this.isRunning) this.child.kill('SIGKILL');
    await this.exited;
    running.delete(this);
  }
}

/** For after hooks: every child a test file started and did not end. */
export async function killAllServices(): Promise<void> {
  await Promise.all([...running].map((service) => service.kill()));
}
