// The operations of a live /openapi.json as the security suite reads them: public or not, the scope a
// route documents, deployment-wide or not, and a URL for each with its path parameters filled in.
import type { LevelWithSilent } from 'pino';
import { generateSigningKeyHex } from '../../src/iam/keys.js';
import { createLogger } from '../../src/kernel/logger.js';
import { startService, type Service } from '../../src/main.js';
import { EXAMPLE_PROJECT } from '../api/helpers.js';
import { operationsOf, type Doc } from '../api/openapiCheck.js';
import { createTestDatabase } from '../support/db.js';
import { bootstrapAdmin, call, type Admin } from '../support/http.js';
import { testSettings, type TestEnv } from '../support/service.js';

export interface Route {
  method: string;
  path: string;
  /** `method path` as the document spells it, for messages. */
  key: string;
  url: string;
  isPublic: boolean;
  /** The scope the operation documents ("Requires scope `x`"), if any. */
  scope: string | undefined;
  /** Documented as for deployment admins only when SVC_TENANT_IDS is set. */
  isDeploymentWide: boolean;
  hasBody: boolean;
}

/** An id nothing has: a route that checks access first refuses before it looks. */
export const ABSENT_ID = '00000000-0000-4000-8000-000000000000';

/** Every operation of `doc`, path parameters replaced by `values[name]` (default: an absent id). */
export function routesOf(doc: Doc, values: Record<string, string> = {}): Route[] {
  return operationsOf(doc).map(({ method, path, op }) => {
    const description = String(op.description ?? '');
    return {
      method: method.toUpperCase(),
      path,
      key: `${method} ${path}`,
      url: path.replace(/\{(\w+)\}/g, (_all, name: string) => encodeURIComponent(values[name] ?? ABSENT_ID)),
      isPublic: Array.isArray(op.security) && op.security.length === 0,
      scope: /Requires scope `([^`]+)`/.exec(description)?.[1],
      isDeploymentWide: description.includes('deployment admins only'),
      hasBody: op.requestBody !== undefined,
    };
  });
}

/** A request with a deadline; an event stream answers its status and headers, then is closed. */
export async function hit(
  baseUrl: string,
  route: { method: string; url: string },
  options: { token?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; text: string; body: any }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${baseUrl}${route.url}`, {
    method: route.method,
    headers,
    signal: AbortSignal.timeout(20_000),
    ...(options.body !== undefined && route.method !== 'GET' ? { body: options.body } : {}),
  });
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, text: '', body: undefined };
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    // Not JSON: kept as text.
  }
  return { status: response.status, headers: response.headers, text, body };
}

export interface Suite {
  service: Service;
  admin: Admin;
  doc: Doc;
  /** Every log line the service wrote (JSON text), at `logLevel`. */
  lines: string[];
}

/** The example project (or a copy of it) served in-process on a database of its own, bootstrapped, its document read. */
export async function startSuite(options: { env?: TestEnv; logLevel?: LevelWithSilent; projectDir?: string } = {}): Promise<Suite> {
  const lines: string[] = [];
  const env = { SVC_SIGNING_KEY: generateSigningKeyHex(), ...options.env };
  const settings = testSettings(await createTestDatabase(), env, options.projectDir ?? EXAMPLE_PROJECT);
  const service = await startService(settings, createLogger(options.logLevel ?? 'info', { write: (line: string) => void lines.push(line) }));
  const admin = await bootstrapAdmin(service.url);
  const doc = (await call(service.url, 'GET', '/openapi.json')).body as Doc;
  return { service, admin, doc, lines };
}

export interface Answered {
  route: Route;
  /** What was sent: `none` (no token), `admin` with a malformed body where the route takes one. */
  as: 'none' | 'admin';
  answer: Awaited<ReturnType<typeof hit>>;
}

/**
 * Every operation called without credentials, and as the admin with a malformed JSON body where it
 * takes one (refused before anything is written): the answers a sweep over the document checks.
 */
export async function sweep(suite: Suite): Promise<Answered[]> {
  const answered: Answered[] = [];
  for (const route of routesOf(suite.doc)) {
    answered.push({ route, as: 'none', answer: await hit(suite.service.url, route) });
    if (route.hasBody) answered.push({ route, as: 'admin', answer: await hit(suite.service.url, route, { token: suite.admin.token, body: '{"a":' }) });
  }
  return answered;
}
