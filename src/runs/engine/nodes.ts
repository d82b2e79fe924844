// Functional step runners: `nodes/<runner>.ts|.js` default-export `(ctx, step) => result`, loaded at boot.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import type { JsonObject } from '../../kernel/json.js';

export interface RunnerStep {
  id: string;
  params: JsonObject;
  runId: string;
  /** Stable per run and step: lets a runner with outside effects make them idempotent across a resume. */
  idempotencyKey: string;
}

export type Runner = (context: JsonObject, step: RunnerStep) => unknown;

const RUNNER_FILE = /^([A-Za-z0-9_-]+)\.(ts|mts|js|mjs)$/;

export class NodeLoadError extends Error {
  constructor(readonly problems: string[]) {
    super(`Functional runners failed to load:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'NodeLoadError';
  }
}

/** Loads every runner of `<projectDir>/nodes`; any failure stops boot with the list. */
export async function loadRunners(projectDir: string): Promise<Map<string, Runner>> {
  const dir = path.join(projectDir, 'nodes');
  const runners = new Map<string, Runner>();
  if (!existsSync(dir)) return runners;
  const problems: string[] = [];
  for (const file of readdirSync(dir).sort()) {
    const match = RUNNER_FILE.exec(file);
    if (!match || file.endsWith('.d.ts')) continue;
    const full = path.join(dir, file);
    try {
      const module = /\.m?ts$/.test(file) ? await importTypeScript(full) : await import(pathToFileURL(full).href);
      const runner = defaultExport(module);
      if (typeof runner !== 'function') problems.push(`nodes/${file}: ${NOT_A_FUNCTION}`);
      else if (runners.has(match[1]!)) problems.push(`nodes/${file}: runner ${match[1]} is defined twice`);
      else runners.set(match[1]!, runner as Runner);
    } catch (error) {
      problems.push(`nodes/${file}: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new NodeLoadError(problems);
  return runners;
}

const NOT_A_FUNCTION =
  'the default export is not a function: export the runner as `export default function (ctx, step) { ... }` (or `module.exports = function ...` in a CommonJS .js file)';

/**
 * The module's default export. In a project whose package.json does not say `"type": "module"`, a
 * runner is compiled as CommonJS: its `export default` lands on `module.exports.default`, which an
 * import shows as `default.default`.
 */
function defaultExport(module: unknown): unknown {
  const exported = (module as { default?: unknown }).default;
  if (exported !== null && typeof exported === 'object' && typeof (exported as { default?: unknown }).default === 'function') {
    return (exported as { default: unknown }).default;
  }
  return exported;
}

/**
 * A TypeScript runner: a plain import when a TypeScript loader is already registered (`--import tsx`,
 * the tests), else tsx's tsImport (whose CommonJS build cannot load its own ESM half).
 */
async function importTypeScript(full: string): Promise<unknown> {
  try {
    return await import(pathToFileURL(full).href);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  }
  return tsImport(pathToFileURL(full).href, import.meta.url);
}
