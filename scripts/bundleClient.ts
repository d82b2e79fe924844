// Bundles the client library for browsers (one ESM file, no Node built-ins) with esbuild.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BROWSER_BUNDLE = path.join(root, 'dist', 'client', 'svc-client.browser.js');

/** Writes the bundle to `outfile`; with `outfile` null, answers its text instead (for tests). */
export async function bundleClient(outfile: string | null = BROWSER_BUNDLE): Promise<string | undefined> {
  const result = await build({
    entryPoints: [path.join(root, 'src', 'client', 'index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    logLevel: 'warning',
    ...(outfile === null ? { write: false } : { outfile, sourcemap: true, legalComments: 'linked' as const }),
  });
  return outfile === null ? result.outputFiles?.[0]?.text : undefined;
}

// No top-level await: mocha requires test files (and what they import) as CommonJS when it can.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  bundleClient().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
