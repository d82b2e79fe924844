// The federation test bench: the fake provider, the service on a fixed port with the fixture project,
// and a browser that follows the redirects by hand and keeps the binding cookie.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Pool } from '../../../src/db/pool.js';
import { openDataKeys } from '../../../src/privacy/boot.js';
import type { Service } from '../../../src/main.js';
import { createTestDatabase, freePort } from '../../support/db.js';
import { call, type HttpResult } from '../../support/http.js';
import { startTestService, type TestEnv } from '../../support/service.js';
import { FakeProvider, type FakeProfile } from './fakeProvider.js';

const FIXTURE_PROJECT = fileURLToPath(new URL('../fixtures/project', import.meta.url));
/** How the fixture files name the fake provider's origin (only credentials take `${VAR}`s). */
const FAKE_ORIGIN_PLACEHOLDER = 'http://fake-idp.test';

const copies = new Set<string>();
process.once('exit', () => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the fixture project whose providers point at this fake provider. */
export function fixtureProject(fake: FakeProvider): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-federation-'));
  copies.add(dir);
  cpSync(FIXTURE_PROJECT, dir, { recursive: true });
  const folder = path.join(dir, 'federation');
  for (const file of readdirSync(folder)) {
    const target = path.join(folder, file);
    writeFileSync(target, readFileSync(target, 'utf8').replaceAll(FAKE_ORIGIN_PLACEHOLDER, fake.url));
  }
  return dir;
}

/** Client credentials the fixture files resolve to, registered with the fake provider. */
export const CLIENTS = {
  google: { id: 'google-client', secret: `google-${randomBytes(6).toString('hex')}` },
  github: { id: 'github-client', secret: `github-${randomBytes(6).toString('hex')}` },
  microsoft: { id: 'ms-client', secret: `ms-${randomBytes(6).toString('hex')}` },
  entra: { id: 'entra-client', secret: `entra-${randomBytes(6).toString('hex')}` },
  acme: { id: 'acme-client', secret: `acme-${randomBytes(6).toString('hex')}` },
  corp: { id: 'corp-client', secret: `corp-${randomBytes(6).toString('hex')}` },
} as const;

export async function startFakeProvider(): Promise<FakeProvider> {
  const fake = await new FakeProvider().start();
  for (const { id, secret } of Object.values(CLIENTS)) fake.addClient(id, secret);
  return fake;
}

/** The environment the fixture project needs (SVC_OAUTH_BASE_URL is the service's own origin). */
export function federationEnv(fake: FakeProvider, port: number, extra: TestEnv = {}): TestEnv {
  return {
    PORT: String(port),
    SVC_OAUTH_BASE_URL: `http://127.0.0.1:${port}`,
    FAKE_GOOGLE_CLIENT_SECRET: CLIENTS.google.secret,
    FAKE_MS_CLIENT_SECRET: CLIENTS.microsoft.secret,
    FAKE_ENTRA_CLIENT_SECRET: CLIENTS.entra.secret,
    FAKE_ACME_CLIENT_SECRET: CLIENTS.acme.secret,
    FAKE_CORP_CLIENT_SECRET: CLIENTS.corp.secret,
    SVC_OAUTH_GITHUB_CLIENT_ID: CLIENTS.github.id,
    SVC_OAUTH_GITHUB_CLIENT_SECRET: CLIENTS.github.secret,
    ...extra,
  };
}

/** The service with the fixture project on a fixed free port, so the redirect URI is known in advance. */
export async function startFederationService(fake: FakeProvider, options: { env?: TestEnv; databaseUrl?: string } = {}): Promise<Service> {
  const port = await freePort();
  return startTestService({
    databaseUrl: options.databaseUrl ?? (await createTestDatabase()),
    projectDir: fixtureProject(fake),
    env: federationEnv(fake, port, options.env),
  });
}

/** A fetch with redirects left to the caller, answered like support/http's results. */
export async function fetchManual(url: string, headers: Record<string, string> = {}): Promise<HttpResult> {
  const response = await fetch(url, { redirect: 'manual', headers });
  const text = await response.text();
  let body: unknown = text.length > 0 ? text : null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, body };
}

export interface StartedLogin {
  /** The provider's redirect back to the service, with `code` and `state`. */
  callbackUrl: URL;
  state: string;
  code: string;
}

/** One browser: keeps the binding cookie the service sets at start and sends it back on the callback. */
export class Browser {
  cookie: string | undefined;

  constructor(private readonly serviceUrl: string) {}

  /** GET start (302 to the provider, cookie kept), then the provider's authorize page (302 back). */
  async startLogin(provider: string, query = ''): Promise<StartedLogin> {
    const start = await fetchManual(`${this.serviceUrl}/auth/oauth/${provider}/start${query}`);
    expect(start.status, JSON.stringify(start.body)).to.equal(302);
    const setCookie = start.headers.getSetCookie().find((c) => c.startsWith('svc_oauth_binding='));
    expect(setCookie, 'the binding cookie').to.be.a('string');
    expect(setCookie!.toLowerCase()).to.include('httponly');
    this.cookie = setCookie!.split(';')[0];
    const authorize = await fetchManual(start.headers.get('location')!);
    expect(authorize.status, JSON.stringify(authorize.body)).to.equal(302);
    const callbackUrl = new URL(authorize.headers.get('location')!);
    return { callbackUrl, state: callbackUrl.searchParams.get('state') ?? '', code: callbackUrl.searchParams.get('code') ?? '' };
  }

  /** GET the callback as this browser (with its cookie unless given another one, or null for none). */
  async finishLogin(callbackUrl: URL | string, cookie: string | null | undefined = this.cookie): Promise<HttpResult> {
    return fetchManual(callbackUrl.toString(), cookie ? { cookie } : {});
  }

  async signIn(provider: string): Promise<HttpResult> {
    const { callbackUrl } = await this.startLogin(provider);
    return this.finishLogin(callbackUrl);
  }
}

/** A whole browser login with the given profile at the fake provider. */
export async function signIn(service: Service, fake: FakeProvider, provider: string, profile: FakeProfile): Promise<HttpResult> {
  fake.willSignIn(profile);
  return new Browser(service.url).signIn(provider);
}

/** Signs in and answers the token and the user id /auth/me reports for it. */
export async function signInOk(
  service: Service,
  fake: FakeProvider,
  provider: string,
  profile: FakeProfile,
): Promise<{ token: string; userId: string; groups: string[] }> {
  const result = await signIn(service, fake, provider, profile);
  expect(result.status, JSON.stringify(result.body)).to.equal(200);
  expect(result.body).to.include({ token_type: 'bearer' });
  const me = await call(service.url, 'GET', '/auth/me', { token: result.body.access_token });
  expect(me.status, JSON.stringify(me.body)).to.equal(200);
  return { token: result.body.access_token, userId: me.body.user_id, groups: me.body.groups };
}

export interface StoredEvent {
  stream_id: string;
  type: string;
  data: Record<string, any>;
}

/** Users' personal values are sealed in the database (docs/privacy.md): the helpers below answer them opened. */
async function opened<T>(pool: Pool, value: T): Promise<T> {
  const keys = await openDataKeys(pool, { env: 'test', dataKeyHex: undefined, previousDataKeyHex: undefined }, false);
  return keys.openDeep(value);
}

export async function eventsOfStream(pool: Pool, streamId: string): Promise<StoredEvent[]> {
  const { rows } = await pool.query<StoredEvent>('SELECT stream_id, type, data FROM events WHERE stream_id = $1 ORDER BY stream_position', [streamId]);
  return opened(pool, rows);
}

export async function eventsOfType(pool: Pool, type: string): Promise<StoredEvent[]> {
  const { rows } = await pool.query<StoredEvent>('SELECT stream_id, type, data FROM events WHERE type = $1 ORDER BY global_position', [type]);
  return opened(pool, rows);
}

export interface UserRow {
  id: string;
  email: string;
  hashed_password: string | null;
  federated_provider: string | null;
  federated_sub: string | null;
}

/** `where` (SQL) is asked of the users with their values opened (the table holds them sealed). */
export async function usersWhere(pool: Pool, where = 'true', params: unknown[] = []): Promise<UserRow[]> {
  const all = await pool.query('SELECT id, email, hashed_password, federated_provider, federated_sub, created_at FROM iam_users');
  const { rows } = await pool.query<UserRow>(
    `SELECT id, email, hashed_password, federated_provider, federated_sub FROM jsonb_to_recordset($${params.length + 1}::jsonb)
       AS iam_users(id uuid, email text, hashed_password text, federated_provider text, federated_sub text, created_at timestamptz)
     WHERE ${where} ORDER BY created_at, id`,
    [...params, JSON.stringify(await opened(pool, all.rows))],
  );
  return rows;
}

export async function countUsers(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM iam_users');
  return rows[0]!.n;
}
