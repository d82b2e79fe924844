// Validation of Agent steps and artifact references: V011, V012, V017 through `svc validate` (exit
// codes and lines) and at boot (errors refuse to start, an unpinned ref is only a warning).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { expect } from 'chai';
import { ProjectError } from '../../src/main.js';
import { copyProject } from '../support/projects.js';
import { startTestService } from '../support/service.js';
import { FIXTURES, REPO, SIGNING_KEY } from './support/harness.js';
import { CLI_ENTRY } from '../support/serviceProcess.js';

const INVALID = path.join(FIXTURES, 'invalid');
const UNPINNED = path.join(FIXTURES, 'unpinned');

async function validate(projectDir: string): Promise<{ code: number | null; lines: string[]; output: string }> {
  const child = spawn(process.execPath, [CLI_ENTRY, 'validate'], {
    cwd: REPO,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SVC_PROJECT_DIR: projectDir, SVC_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, lines: output.split('\n').filter((l) => l.length > 0), output };
}

describe('validation of agents and artifact references', function () {
  this.timeout(30_000);

  describe('svc validate on a project with broken agents', () => {
    let result: Awaited<ReturnType<typeof validate>>;
    before(async () => {
      result = await validate(INVALID);
    });

    /** The one ERROR line of a workflow with that code. */
    function finding(code: string, workflow: string): string {
      const found = result.lines.filter((l) => l.startsWith(`ERROR ${code} `) && l.includes(` ${workflow} v1 `));
      expect(found, `${code} for ${workflow} in:\n${result.output}`).to.have.length(1);
      return found[0]!;
    }

    it('exits 1', () => {
      expect(result.code, result.output).to.equal(1);
      expect(result.output).to.match(/12 workflows, 0 models: 12 errors, 0 warnings/);
    });

    it('V011: an Agent without model or mode, with an unknown AgentModel, autonomous without tools, an unknown tool ref, or a tool that is no tool', () => {
      expect(finding('V011', 'v011_no_model')).to.include('step agent').and.include('agent.model');
      expect(finding('V011', 'v011_no_mode')).to.include('mode: completion or autonomous');
      expect(finding('V011', 'v011_unknown_model')).to.include('ghost_model');
      expect(finding('V011', 'v011_no_tools')).to.include('autonomous Agent needs tools');
      expect(finding('V011', 'v011_bad_tool')).to.include('ghost_step');
      // A Router (or HumanInTheLoop, Agent, Response) cannot answer as a tool.
      expect(finding('V011', 'v011_tool_kind')).to.include('tool ref pick is a Router step');
    });

    it('V012: an outcome enum value that no route maps', () => {
      const line = finding('V012', 'v012_unrouted');
      expect(line).to.include('no_thanks');
      expect(line).to.not.include('yes_please');
    });

    it('V017: an unresolved ref, a missing version, and a ref of the wrong type (steering, guardrail, prompt) are errors', () => {
      expect(finding('V017', 'v017_unresolved')).to.include('artifact://missing_prompt@1 does not resolve');
      expect(finding('V017', 'v017_no_such_version')).to.include('artifact://a_prompt@9 does not resolve');
      expect(finding('V017', 'v017_wrong_steering')).to.include('is a prompt, expected a steering');
      expect(finding('V017', 'v017_wrong_guardrail')).to.include('is a prompt, expected a guardrail');
      expect(finding('V017', 'v017_wrong_prompt')).to.include('is a guardrail, expected a prompt or steering or skill');
    });
  });

  it('an unpinned artifact ref is a V017 warning: validate exits 0 and the service boots', async () => {
    const result = await validate(UNPINNED);
    expect(result.code, result.output).to.equal(0);
    expect(result.lines.filter((l) => l.startsWith('WARNING V017'))).to.have.length(1);
    expect(result.output).to.include('artifact://a_prompt is not pinned');
    const service = await startTestService({ projectDir: UNPINNED, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
    await service.close();
  });

  it('boot refuses a project whose only problem is an unresolved artifact ref (V017)', async () => {
    const project = copyProject(UNPINNED, {
      'workflows/unpinned.yaml': [
        'kind: Workflow',
        'metadata: {name: unresolved, schema_version: v1, description: Refers to nothing.}',
        'spec:',
        '  trigger:',
        '    http: {path: /api/unresolved, method: POST}',
        '  steps:',
        '    - id: agent',
        '      kind: Agent',
        '      mode: completion',
        "      agent: {model: fixed, prompt: 'artifact://a_prompt@1', steering: ['artifact://gone@1']}",
        '      routes: {error: END, max_iterations: END, budget_exceeded: END, guardrail_violation: END, aborted: END}',
        '',
      ].join('\n'),
    });
    let refused: unknown;
    try {
      const service = await startTestService({ projectDir: project, env: { SVC_SIGNING_KEY: SIGNING_KEY } });
      await service.close();
    } catch (error) {
      refused = error;
    }
    expect(refused, 'the service must not boot').to.be.instanceOf(ProjectError);
    expect((refused as ProjectError).problems).to.have.length(1);
    expect((refused as ProjectError).problems[0]).to.match(/^ERROR V017 .*artifact:\/\/gone@1 does not resolve/);
  });
});
