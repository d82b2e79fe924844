// Private copies of fixture projects, for tests that write into a project (forks) or change one of
// its files; every copy is removed when the test process exits.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const copies = new Set<string>();
process.once('exit', () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the project folder `source`, with `files` (path in the project -> text) written on top. */
export function copyProject(source: string, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), `svc-${path.basename(source).replace(/\W/g, '-')}-`));
  copies.add(dir);
  cpSync(source, dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}
