// The shape STYLE.md asks of src/ (and of the console's console/src/): files under ~300 lines and functions under ~60, unless the file says
// at its top why it is longer (a line `// shape: <reason>` among its first five). Measured on the
// syntax tree (swc), so a long object literal is no function and a nested function counts on its own.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync, type Node } from '@swc/core';
import { expect } from 'chai';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = path.join(REPO, 'src');
const CONSOLE_SRC = path.join(REPO, 'console', 'src');
/** Code a generator wrote: its shape is the generator's. */
const GENERATED = path.join(SRC, 'contract', 'gen');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 60;
const FUNCTION_TYPES = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ClassMethod',
  'PrivateMethod',
  'MethodProperty',
  'Constructor',
  'GetterProperty',
  'SetterProperty',
]);

interface LongFunction {
  name: string;
  line: number;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === GENERATED ? [] : sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** Every function of the file longer than the limit, with its first line (1-based). */
function longFunctions(source: string, isTsx = false): LongFunction[] {
  // swc's offsets keep counting across parses and start at the module's first token: a leading `;`
  // pins that token to the file's first byte.
  const module = parseSync(`;${source}`, { syntax: 'typescript', tsx: isTsx, target: 'es2022' });
  const base = module.span.start + 1;
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  const lineOf = (offset: number) => {
    const at = Buffer.from(source)
      .subarray(0, offset - base)
      .toString().length;
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (lineStarts[mid]! <= at) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };
  const found: LongFunction[] = [];
  const visit = (node: unknown, name: string): void => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, name));
    if (node === null || typeof node !== 'object') return;
    const current = node as Node & {
      span?: { start: number; end: number };
      key?: { value?: string };
      identifier?: { value?: string };
      id?: { value?: string };
    };
    const label = current.key?.value ?? current.identifier?.value ?? current.id?.value ?? name;
    if (FUNCTION_TYPES.has(current.type) && current.span) {
      const first = lineOf(current.span.start);
      const lines = lineOf(current.span.end) - first + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ name: label, line: first, lines });
    }
    for (const [key, value] of Object.entries(current)) if (key !== 'span') visit(value, label);
  };
  visit(module.body, '(module)');
  return found;
}

const hasReason = (source: string) =>
  source
    .split('\n')
    .slice(0, 5)
    .some((line) => /^\/\/ shape: \S/.test(line));

describe('the shape of src/ and console/src/', () => {
  const files = [...sourceFiles(SRC), ...sourceFiles(CONSOLE_SRC)].map((file) => ({ file: path.relative(REPO, file), source: readFileSync(file, 'utf8') }));

  it('reads every source file', () => {
    expect(files.length).to.be.greaterThan(100);
    expect(files.some(({ file }) => file.startsWith('console/src/'))).to.equal(true);
    expect(longFunctions('export function tooLong() {\n' + '  work();\n'.repeat(70) + '}\n')).to.deep.equal([{ name: 'tooLong', line: 1, lines: 72 }]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES} lines without a reason at its top`, () => {
    const problems = files.flatMap(({ file, source }) => {
      if (hasReason(source)) return [];
      const lines = source.split('\n').length - (source.endsWith('\n') ? 1 : 0);
      return [
        ...(lines > MAX_FILE_LINES ? [`${file}: ${lines} lines`] : []),
        ...longFunctions(source, file.endsWith('.tsx')).map((f) => `${file}:${f.line} ${f.name}: ${f.lines} lines`),
      ];
    });
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
