// docs/operations.md's settings table and the settings schema name the same settings.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { SETTING_NAMES } from '../../src/config/schema.js';

const OPERATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/operations.md');
/** Documented settings read outside the schema: where svc.yaml is, and names made of a provider's. */
const OUTSIDE_THE_SCHEMA = ['SVC_PROJECT_DIR', 'SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET'];

/** The names in the first column of the table under "## Settings". */
function documentedSettings(): string[] {
  const markdown = readFileSync(OPERATIONS, 'utf8');
  const section = markdown.slice(markdown.indexOf('## Settings'), markdown.indexOf('\n## ', markdown.indexOf('## Settings')));
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

describe('the settings table of docs/operations.md', () => {
  const documented = documentedSettings();

  it('lists every setting of the schema', () => {
    expect(documented.length, 'the table is found').to.be.greaterThan(10);
    expect(SETTING_NAMES.filter((name) => !documented.includes(name))).to.deep.equal([]);
  });

  it('lists no setting the service does not read', () => {
    expect(documented.filter((name) => !SETTING_NAMES.includes(name) && !OUTSIDE_THE_SCHEMA.includes(name))).to.deep.equal([]);
  });
});
