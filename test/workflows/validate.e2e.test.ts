// `svc validate` on fixture projects: V-codes with file and step, exit codes, --strict; an invalid project stops boot.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { bootstrapAdmin, client } from '../support/http.js';
import { startTestService } from '../support/service.js';
import { FIXTURES, SIGNING_KEY } from './helpers.js';
import { CLI_ENTRY } from '../support/serviceProcess.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function validate(project: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI_ENTRY, 'validate', ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_LOG_LEVEL: 'silent', SVC_PROJECT_DIR: path.join(FIXTURES, project) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = await once(child, 'close');
  clearTimeout(timer);
  return { code: code as number | null, stdout, stderr };
}

describe('workflow validation', function () {
  this.timeout(30_000);

  describe('svc validate', () => {
    let invalid: Awaited<ReturnType<typeof validate>>;
    const lineOf = (code: string) => invalid.stdout.split('\n').filter((line) => line.includes(` ${code} `));

    before(async function () {
      this.timeout(30_000);
      invalid = await validate('invalid');
    });

    it('exits 1 when a project has errors and prints the count', () => {
      expect(invalid.code, invalid.stderr).to.equal(1);
      expect(invalid.stdout).to.match(/13 workflows, 1 models: 12 errors, 0 warnings/);
    });

    const expected: [string, string, string | null, RegExp][] = [
      ['V001', 'workflows/badkey.yaml', 'pick', /unknown key colour for a Router step/],
      ['V002', 'workflows/dup.yaml', 'twice', /used twice/],
      ['V003', 'workflows/badroute.yaml', 'jumper', /nowhere/],
      ['V006', 'workflows/norunner.yaml', 'ghost', /not_there/],
      ['V007', 'workflows/nomodel.yaml', 'save', /Thing/],
      ['V008', 'workflows/badtemplate.yaml', 'check', /not a path! \}\} is not a path/],
      ['V009', 'workflows/badschema.yaml', null, /Nope\.create/],
      ['V010', 'workflows/clash_b.yaml', null, /POST \/api\/same.*clash_a/],
      ['V019', 'workflows/publicscope.yaml', null, /public/],
      ['V020', 'workflows/mcpexport.yaml', null, /MCP export needs metadata.description/],
      ['V021', 'workflows/badscope.yaml', null, /bad scope!/],
      // A form field type the decision validator cannot compile would make every decision a 500.
      ['V022', 'workflows/badform.yaml', 'ask', /amount: type number/],
    ];
    for (const [code, file, step, message] of expected) {
      it(`reports ${code} with its file${step ? ' and step' : ''}`, () => {
        const lines = lineOf(code);
        expect(lines, invalid.stdout).to.have.length(1);
        const line = lines[0]!;
        expect(line.startsWith(`ERROR ${code} ${file} `), line).to.equal(true);
        if (step) expect(line).to.include(` step ${step}: `);
        expect(line).to.match(message);
      });
    }

    it('exits 0 on warnings alone (V004 unrouted error, V005 unreachable) and 1 with --strict', async () => {
      const lenient = await validate('warnings');
      expect(lenient.code, lenient.stderr).to.equal(0);
      expect(lenient.stdout).to.include('WARNING V004 workflows/loose.yaml loose v1 step unguarded:');
      expect(lenient.stdout).to.include('WARNING V005 workflows/loose.yaml loose v1 step stranded:');
      expect(lenient.stdout).to.match(/0 errors, 2 warnings/);
      const strict = await validate('warnings', '--strict');
      expect(strict.code).to.equal(1);
      expect(strict.stdout).to.include('WARNING V004');
    });

    it('exits 0 with --strict on a clean project', async () => {
      const clean = await validate('versions', '--strict');
      expect(clean.code, clean.stdout + clean.stderr).to.equal(0);
      expect(clean.stdout).to.match(/0 errors, 0 warnings/);
    });
  });

  describe('svc validate: retry and Wait keys', () => {
    let timing: Awaited<ReturnType<typeof validate>>;
    const linesOf = (code: string, file: string) => timing.stdout.split('\n').filter((line) => line.startsWith(`ERROR ${code} workflows/${file}.yaml `));

    before(async function () {
      this.timeout(30_000);
      timing = await validate('timing');
    });

    const expected: [string, string, string, RegExp[]][] = [
      ['V023', 'badduration', 'nap', [/duration "10 minutes" is not a duration/]],
      ['V023', 'badretry', 'again', [/retry.initial_interval "soon" is not a duration/]],
      ['V024', 'retryonrouter', 'pick', [/retry is for steps that call out .* not a Router step/]],
      ['V025', 'waitboth', 'nap', [/exactly one of duration and until/]],
      ['V025', 'waitnone', 'idle', [/exactly one of duration and until/]],
      [
        'V026',
        'badretry',
        'act',
        [/max_attempts must be an integer/, /backoff must be exponential or fixed/, /jitter must be true or false/, /max_interval is shorter/],
      ],
      ['V026', 'bothretries', 'call', [/http.retries are both given/]],
      ['V027', 'baduntil', 'later', [/until "next tuesday" must be an ISO 8601 date-time/]],
    ];
    for (const [code, file, step, messages] of expected) {
      it(`reports ${code} in ${file}.yaml`, () => {
        const lines = linesOf(code, file);
        expect(lines, timing.stdout).to.have.length(messages.length);
        for (const message of messages)
          expect(
            lines.some((line) => line.includes(` step ${step}: `) && message.test(line)),
            `${message} in\n${timing.stdout}`,
          ).to.equal(true);
      });
    }

    it('accepts every retry key and both kinds of Wait, and counts the errors', () => {
      expect(timing.code).to.equal(1);
      expect(timing.stdout).to.not.include('workflows/good.yaml');
      expect(timing.stdout).to.match(/8 workflows, 0 models: 11 errors, 0 warnings/);
    });
  });

  describe('svc validate: Workflow steps (child runs)', () => {
    let children: Awaited<ReturnType<typeof validate>>;
    const linesOf = (code: string, file: string) => children.stdout.split('\n').filter((line) => line.includes(` ${code} workflows/${file}.yaml `));

    before(async function () {
      this.timeout(30_000);
      children = await validate('children');
    });

    const expected: [string, string, string | null, RegExp[]][] = [
      ['V040', 'nochild', 'call', [/needs workflow: the name of the workflow it runs/]],
      ['V041', 'unknownchild', 'ghost', [/workflow ghost is not defined/]],
      ['V041', 'unknownchild', 'old', [/workflow target has no version v9 \(it has v1\)/]],
      ['V042', 'badinput', 'call', [/input.n: "not a path!" is not a context path/]],
      ['V043', 'forgetkey', 'call', [/output_key needs wait: true/]],
      ['V044', 'badwait', 'call', [/wait must be true or false/, /output_key must be a context key/]],
      ['V045', 'loop_a', null, [/loop_a starts itself through Workflow steps/]],
      ['V045', 'loop_b', null, [/loop_b starts itself through Workflow steps/]],
    ];
    for (const [code, file, step, messages] of expected) {
      it(`reports ${code} in ${file}.yaml${step ? ` step ${step}` : ''}`, () => {
        const lines = linesOf(code, file).filter((line) => (step ? line.includes(` step ${step}: `) : !line.includes(' step ')));
        expect(lines, children.stdout).to.have.length(messages.length);
        for (const message of messages)
          expect(
            lines.some((line) => message.test(line)),
            `${message} in\n${children.stdout}`,
          ).to.equal(true);
      });
    }

    it('accepts a Workflow step with every key, and counts the findings', () => {
      expect(children.code).to.equal(1);
      expect(children.stdout).to.not.include('workflows/good.yaml');
      expect(children.stdout).to.match(/9 workflows, 0 models: 7 errors, 2 warnings/);
    });
  });

  describe('at boot', () => {
    it('a project with errors makes the service refuse to start, listing the findings', async () => {
      let failure: Error | undefined;
      try {
        const service = await startTestService({ projectDir: path.join(FIXTURES, 'invalid'), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
        await service.close();
      } catch (error) {
        failure = error as Error;
      }
      expect(failure, 'the invalid project started').to.be.instanceOf(Error);
      for (const code of ['V002', 'V003', 'V006', 'V007', 'V009', 'V010', 'V019', 'V021']) expect(failure!.message).to.include(code);
    });

    it('a project with warnings only starts and serves', async () => {
      const service = await startTestService({ projectDir: path.join(FIXTURES, 'warnings'), env: { SVC_SIGNING_KEY: SIGNING_KEY } });
      try {
        const api = client(service.url, (await bootstrapAdmin(service.url)).token);
        const result = await api.post('/api/workflows/loose/runs', {});
        expect(result.status, JSON.stringify(result.body)).to.equal(201);
      } finally {
        await service.close();
      }
    });
  });
});
