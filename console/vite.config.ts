// Builds the console into dist/public/console, which svc serves at /console (src/console/routes.ts).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: path.resolve(here, '..', 'dist', 'public', 'console'),
    emptyOutDir: true,
    // Nothing inlined as data: URLs; the page's CSP loads files the service serves.
    assetsInlineLimit: 0,
    sourcemap: true,
    chunkSizeWarningLimit: 1000,
  },
});
