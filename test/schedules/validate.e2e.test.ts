// `svc validate` knows spec.trigger.schedule: V030 shape, V031 cron, V032 time zone, V033 overlap, V034 catchup, V035 duplicate id, V036 input.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { runCli } from '../support/serviceProcess.js';

const INVALID = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'invalid');

describe('svc validate: schedules', function () {
  this.timeout(90_000);

  it('reports each bad schedule with its code and nothing for good ones', async () => {
    const { code, stdout, stderr } = await runCli(['validate'], { SVC_PROJECT_DIR: INVALID }, 60_000);
    expect(code, stderr).to.equal(1);
    const lines = stdout.split('\n').filter((line) => line.startsWith('ERROR '));
    const found = lines.map((line) => / (V0\d\d) /.exec(line)![1]).sort();
    expect(found, stdout).to.deep.equal(['V030', 'V031', 'V031', 'V032', 'V033', 'V034', 'V035', 'V036']);
    const elsewhere = lines.filter((line) => !line.includes('workflows/bad_schedules.yaml'));
    expect(
      elsewhere.map((line) => / (V0\d\d) (\S+)/.exec(line)!.slice(1)),
      'good_schedules.yaml has no error',
    ).to.deep.equal([['V036', 'workflows/bad_input.yaml']]);
    const lineOf = (code: string) => lines.filter((line) => line.includes(` ${code} `)).join('\n');
    expect(lineOf('V030')).to.match(/schedule\[5\]\.colour/);
    expect(lineOf('V031'))
      .to.match(/schedule\[0\]\.cron/)
      .and.to.match(/schedule\[6\]\.cron/);
    expect(lineOf('V032')).to.match(/Mars\/Olympus/);
    expect(lineOf('V033')).to.match(/skip, allow/);
    expect(lineOf('V034')).to.match(/none, latest, all/);
    expect(lineOf('V035')).to.match(/schedule id a is used twice/);
    expect(lineOf('V036')).to.match(/bad_input\.yaml.*schedule wrong: .*count/);
  });
});
