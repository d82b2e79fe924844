// Bundles the client library for browsers (one ESM file, no Node built-ins) with esbuild.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/client/index.ts'],
  outfile: 'dist/client/svc-client.browser.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  sourcemap: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
