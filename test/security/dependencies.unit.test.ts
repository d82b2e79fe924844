// ASVS 5.0 V15.1.2 and V15.2.4 (an inventory of third-party components, each from the expected
// repository, no dependency confusion), checked offline on package.json and package-lock.json: every
// dependency is a registry package pinned in the lock by version and sha512 integrity, none comes from
// git, a URL, a file or a link, and a recorded download address is the npm registry's.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const readJson = (name: string) => JSON.parse(readFileSync(path.join(REPO, name), 'utf8')) as Record<string, any>;
const REGISTRY = 'https://registry.npmjs.org/';
/** A version range from the registry (`^1.2.3`, `~1.2`, `1.2.3`), not git, a URL, a file, a tag or an alias. */
const REGISTRY_RANGE = /^[\^~]?\d+(\.\d+){0,2}(-[\w.]+)?$/;

describe('ASVS V15 dependencies', () => {
  const manifest = readJson('package.json');
  const lock = readJson('package-lock.json');
  const packages = Object.entries(lock.packages as Record<string, Record<string, any>>).filter(([where]) => where !== '');

  it('V15.2.4 every direct dependency is a version range of a registry package, none from git, a URL or a file', () => {
    const declared = { ...manifest.dependencies, ...manifest.devDependencies, ...manifest.optionalDependencies } as Record<string, string>;
    expect(Object.keys(declared)).to.have.length.greaterThan(10);
    const wrong = Object.entries(declared).filter(([, range]) => !REGISTRY_RANGE.test(range));
    expect(wrong).to.deep.equal([]);
  });

  it('V15.1.2 V15.2.4 the lock pins every package, transitive ones too, by version and sha512 integrity, from the npm registry only', () => {
    expect(lock.lockfileVersion).to.equal(3);
    expect(packages.length).to.be.greaterThan(100);
    const wrong = packages
      .filter(([where, entry]) => {
        const resolved = entry.resolved as string | undefined;
        const isRegistry = resolved === undefined || resolved.startsWith(REGISTRY);
        return !where.startsWith('node_modules/') || entry.link === true || !entry.version || !/^sha512-/.test(entry.integrity ?? '') || !isRegistry;
      })
      .map(([where, entry]) => `${where}: ${JSON.stringify({ version: entry.version, resolved: entry.resolved, link: entry.link })}`);
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('V15.1.2 the lock holds what package.json declares: every direct dependency is in it', () => {
    const declared = { ...manifest.dependencies, ...manifest.devDependencies } as Record<string, string>;
    const missing = Object.keys(declared).filter((name) => lock.packages[`node_modules/${name}`] === undefined);
    expect(missing).to.deep.equal([]);
    expect(lock.packages[''].dependencies).to.deep.equal(manifest.dependencies);
    expect(lock.packages[''].devDependencies).to.deep.equal(manifest.devDependencies);
  });
});
