// The console (/console): the single-page app console/ builds into dist/public/console, served with a
// strict page policy. Every client route of the app (/console/runs/...) answers its index page.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';
import { consoleSecurityHeaders, noStore } from '../http/securityHeaders.js';
import { NotFoundError, UnavailableError } from '../kernel/errors.js';

/** The build output of console/ (vite.config.ts writes it): the same place from src/ and from dist/. */
export const CONSOLE_BUILD = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'public', 'console');

/** The index page, read once; undefined when the console was not built (then /console says how to build it). */
export function readConsoleIndex(folder: string = CONSOLE_BUILD): string | undefined {
  const file = path.join(folder, 'index.html');
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

export function consoleRouter(options: { folder?: string } = {}): Router {
  const folder = options.folder ?? CONSOLE_BUILD;
  const index = readConsoleIndex(folder);
  const router = Router();
  router.use('/console', consoleSecurityHeaders);
  // Hashed file names: a file never changes under its name.
  router.use('/console/assets', express.static(path.join(folder, 'assets'), { index: false, immutable: true, maxAge: '365d' }), (req) => {
    throw new NotFoundError(`No console file ${req.path}`);
  });
  // Every other path is a page of the app: the index page, which routes in the browser.
  router.get(['/console', '/console/{*rest}'], noStore, (_req, res) => {
    if (index === undefined) throw new UnavailableError('The console is not built: run `npm run build`');
    res.type('html').send(index);
  });
  return router;
}
