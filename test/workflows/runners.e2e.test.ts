// Functional runners of a project outside any `"type": "module"` package.json, loaded the way `npm start`
// loads them (the compiled CLI, no TypeScript loader registered): TypeScript and CommonJS runners
// load and run, and a file without a default function says how to export one.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createTestDatabase } from '../support/db.js';
import { call } from '../support/http.js';
import { killAllServices, runCli, ServiceProcess } from '../support/serviceProcess.js';

const WORKFLOW = `kind: Workflow
metadata: {name: shout, schema_version: v1}
spec:
  trigger:
    http: {path: /api/shout, method: POST, public: true}
    input_schema: [{name: text, type: string, required: true}]
  steps:
    - {id: upper, kind: Functional, runner: upper, routes: {error: END}}
    - {id: legacy, kind: Functional, runner: legacy, routes: {error: END}}
    - {id: respond, kind: Response, mapping: {text: text, legacy: legacy}}
`;

const dirs: string[] = [];

/** A project folder under the system temp folder, where no package.json says `"type": "module"`. */
function projectWith(nodes: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-cjs-project-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'nodes'));
  mkdirSync(path.join(dir, 'workflows'));
  writeFileSync(path.join(dir, 'workflows', 'shout.yaml'), WORKFLOW);
  for (const [file, source] of Object.entries(nodes)) writeFileSync(path.join(dir, 'nodes', file), source);
  return dir;
}

describe('Functional runners in a project without "type": "module"', function () {
  this.timeout(60_000);
  after(async () => {
    await killAllServices();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('loads a TypeScript `export default` runner and a CommonJS `module.exports` runner in `svc serve`, and runs them', async () => {
    const dir = projectWith({
      'upper.ts': 'export default function upper(ctx: { text: string }): { text: string } {\n  return { text: ctx.text.toUpperCase() };\n}\n',
      'legacy.js': 'module.exports = function legacy() {\n  return { legacy: true };\n};\n',
    });
    const service = await ServiceProcess.start(await createTestDatabase(), dir);
    const answer = await call(service.url, 'POST', '/api/shout', { json: { text: 'quiet' } });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    expect(answer.body).to.deep.equal({ text: 'QUIET', legacy: true });
  });

  it('`svc validate` refuses a runner without a default function and says how to export one', async () => {
    const dir = projectWith({
      'upper.ts': 'export function upper(ctx: { text: string }): { text: string } {\n  return ctx;\n}\n',
      'legacy.js': 'module.exports = function legacy() {\n  return {};\n};\n',
    });
    const result = await runCli(['validate'], { SVC_PROJECT_DIR: dir }, 30_000);
    expect(result.code, result.stdout + result.stderr).to.equal(1);
    expect(result.stderr).to.include('nodes/upper.ts: the default export is not a function');
    expect(result.stderr).to.include('export default function (ctx, step)');
    expect(result.stderr).to.not.include('nodes/legacy.js');
  });
});
