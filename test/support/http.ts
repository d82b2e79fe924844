// HTTP helpers for e2e tests: JSON and form requests with an optional bearer token, login, a bootstrapped
// admin; and waiting for a condition or an answer with a deadline.
import { request as httpRequest } from 'node:http';
import { expect } from 'chai';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  /** Parsed JSON, the raw text when it is not JSON, null when empty. */
  body: T;
}

export interface RequestOptions {
  token?: string;
  /** Sent as JSON (a string is sent as is, with the JSON content type). */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export async function call<T = any>(baseUrl: string, method: string, path: string, options: RequestOptions = {}): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof options.json === 'string' ? options.json : JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/** Short-hands bound to one service (and optionally one token). */
export function client(baseUrl: string, token?: string) {
  const withToken = (options: RequestOptions = {}): RequestOptions => (token !== undefined && options.token === undefined ? { ...options, token } : options);
  return {
    get: <T = any>(path: string, options?: RequestOptions) => call<T>(baseUrl, 'GET', path, withToken(options)),
    post: <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
      call<T>(baseUrl, 'POST', path, withToken({ ...options, ...(json !== undefined ? { json } : {}) })),
    patch: <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
      call<T>(baseUrl, 'PATCH', path, withToken({ ...options, ...(json !== undefined ? { json } : {}) })),
    put: <T = any>(path: string, json?: unknown, options?: RequestOptions) =>
      call<T>(baseUrl, 'PUT', path, withToken({ ...options, ...(json !== undefined ? { json } : {}) })),
    delete: <T = any>(path: string, options?: RequestOptions) => call<T>(baseUrl, 'DELETE', path, withToken(options)),
  };
}

export interface TokenBody {
  access_token: string;
  token_type: string;
  expires_in: number;
}

/** The password grant of POST /auth/token, as the raw result. */
export function requestToken(baseUrl: string, username: string, password: string): Promise<HttpResult> {
  return call(baseUrl, 'POST', '/auth/token', { form: { username, password, grant_type: 'password' } });
}

/** Logs in and answers the access token; fails the test unless the login succeeds. */
export async function login(baseUrl: string, username: string, password: string): Promise<string> {
  const result = await requestToken(baseUrl, username, password);
  expect(result.status, `login of ${username}: ${JSON.stringify(result.body)}`).to.equal(200);
  return (result.body as TokenBody).access_token;
}

export interface Admin {
  token: string;
  userId: string;
  email: string;
  password: string;
}

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'correct horse battery staple';

/** POST /auth/bootstrap on an empty database: the superadmin and its token. */
export async function bootstrapAdmin(baseUrl: string, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<Admin> {
  const result = await call(baseUrl, 'POST', '/auth/bootstrap', { json: { email, password } });
  expect(result.status, JSON.stringify(result.body)).to.equal(200);
  return { token: result.body.access_token, userId: result.body.user_id, email, password };
}

/** A 401 as the spec wants it: `WWW-Authenticate: Bearer`, the error body, and the detail when given. */
export function expectUnauthenticated(result: HttpResult, detail?: string | RegExp): void {
  expect(result.status, JSON.stringify(result.body)).to.equal(401);
  expect(result.headers.get('www-authenticate')).to.equal('Bearer');
  expect(result.body).to.include({ code: 'UNAUTHENTICATED' });
  if (typeof detail === 'string') expect(result.body.detail).to.equal(detail);
  else if (detail) expect(result.body.detail).to.match(detail);
}

/** The status and error code of an error answer, with a readable message on mismatch. */
export function expectError(result: HttpResult, status: number, code?: string): void {
  expect(result.status, JSON.stringify(result.body)).to.equal(status);
  if (code !== undefined) expect(result.body).to.include({ code });
}

/** The payload of a JWT, decoded without verification. */
export function payloadOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, any>;
}

/** Retries `probe` until it answers true or `timeoutMs` passes; answers whether it did and how long it took. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 20): Promise<{ ok: boolean; elapsedMs: number }> {
  const start = Date.now();
  for (;;) {
    if (await probe()) return { ok: true, elapsedMs: Date.now() - start };
    if (Date.now() - start > timeoutMs) return { ok: false, elapsedMs: Date.now() - start };
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * `promise`, or a rejection naming `what` when it has not settled within `timeoutMs`: a hang fails the
 * test with a reason instead of stalling it.
 */
export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One request on a connection of its own (no keep-alive): behind an SVC_WORKERS cluster, successive
 * calls go to the workers in turn, where a pooled connection would stay with one.
 */
export function onNewConnection(url: string, method: string, body?: unknown, token?: string): Promise<{ status: number; text: string; type: string }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        agent: false,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, type: String(res.headers['content-type'] ?? '') }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
