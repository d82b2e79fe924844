// What an express app has mounted, read from its router stack: the routes (method and path) and the
// path-scoped middleware, paths written as OpenAPI templates (`:id` -> `{id}`).
import type { Express } from 'express';

export interface MountedRoute {
  /** Lower-case HTTP method, or `all` for `router.all`. */
  method: string;
  path: string;
}

export interface MountedRoutes {
  routes: MountedRoute[];
  /** `use(path, ...)` mounts other than `/` (guards, static files, UIs): they answer paths no route lists. */
  middleware: string[];
}

/** The parts of express 5's (router 2.x) layers read here; not a public API, so read defensively. */
interface StackLayer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: StackLayer[] };
}

const asPaths = (value: unknown): string[] => (Array.isArray(value) ? value.flat(Infinity) : [value]).map((p) => (typeof p === 'string' ? p : String(p)));
const joined = (prefix: string, path: string) => (path === '/' ? prefix || '/' : `${prefix}${path}`);
const templated = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function walk(stack: StackLayer[], prefix: string, found: MountedRoutes): void {
  for (const layer of stack) {
    if (layer.route) {
      const methods = Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m]);
      for (const path of asPaths(layer.route.path)) {
        for (const method of methods) found.routes.push({ method: method === '_all' ? 'all' : method, path: templated(joined(prefix, path)) });
      }
    } else if (Array.isArray(layer.handle?.stack)) {
      for (const path of asPaths(layer.rawPath ?? '/')) walk(layer.handle.stack, path === '/' ? prefix : `${prefix}${path}`, found);
    } else {
      for (const path of asPaths(layer.rawPath ?? '/')) if (path !== '/') found.middleware.push(templated(joined(prefix, path)));
    }
  }
}

/**
 * Every route and path-scoped middleware of the app, in mounting order.
 *
 * @example
 * const { routes } = listMountedRoutes(app); // [{ method: 'get', path: '/health' }, ...]
 */
export function listMountedRoutes(app: Express): MountedRoutes {
  const found: MountedRoutes = { routes: [], middleware: [] };
  walk((app.router as unknown as { stack: StackLayer[] }).stack, '', found);
  return { routes: found.routes, middleware: [...new Set(found.middleware)] };
}
