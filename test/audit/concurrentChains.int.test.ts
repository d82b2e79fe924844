// Two processes appending to the same streams at once (`any`, single and multi-stream) still chain every event.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { verifyAuditLog } from '../../src/audit/verify.js';
import { appendRounds, openFixture, type AuditFixture } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROUNDS = 60;

function appendInChild(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'appendManyInChild.ts')], {
      cwd: path.resolve(here, '../..'),
      env: { ...process.env, DATABASE_URL: url, ROUNDS: String(ROUNDS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(killer);
      if (code === 0 && output.includes('done')) resolve();
      else reject(new Error(`child exited with ${code}: ${output}`));
    });
  });
}

describe('audit: chains under concurrent appends from two processes', () => {
  let fixture: AuditFixture;

  before(async () => {
    fixture = await openFixture();
  });
  after(async () => {
    await fixture?.pool.end();
  });

  it('verifies after both processes raced on the same streams', async function () {
    this.timeout(120_000);
    await Promise.all([appendInChild(fixture.url), appendRounds(fixture.store, ROUNDS, 'parent')]);
    const perProcess = ROUNDS * (3 + 3);
    expect(await verifyAuditLog(fixture.pool, fixture.keys.jwks)).to.deep.equal({
      ok: true,
      events_checked: 2 * perProcess,
      checkpoints_checked: 0,
      first_broken: null,
    });
  });
});
