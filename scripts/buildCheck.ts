// Child processes of the suite and the benchmarks' service run the compiled code (dist/): a dist/
// older than the sources would test or measure code that is not the code in front of you, so both
// refuse to start on one.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(full);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield full;
  }
}

/** Throws naming the first source file whose compiled file is missing or older than it. */
export function assertBuildIsCurrent(): void {
  const src = path.join(REPO, 'src');
  for (const file of sourceFiles(src)) {
    const compiled = path.join(REPO, 'dist', path.relative(src, file)).replace(/\.ts$/, '.js');
    let compiledAt: number;
    try {
      compiledAt = statSync(compiled).mtimeMs;
    } catch {
      throw new Error(
        `dist/ has no ${path.relative(REPO, compiled)}: run \`npm run build\` first (the suite's child processes and the benchmarks' service run the built code)`,
      );
    }
    if (compiledAt < statSync(file).mtimeMs) {
      throw new Error(
        `${path.relative(REPO, file)} changed after dist/ was built: run \`npm run build\` first (the suite's child processes and the benchmarks' service run the built code)`,
      );
    }
  }
}
