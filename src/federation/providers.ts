// Federation providers: FederationProvider documents (federation/ and the admin API), built-in
// endpoints for google, github and microsoft, `${VAR}` secrets, SVC_OAUTH_<PROVIDER>_* fallbacks.
import { interpolateEnvironment } from '../config/interpolate.js';
import type { Settings } from '../config/settings.js';
import type { JsonObject } from '../kernel/json.js';
import { builtIn, providerDocumentSchema, REDACTED, type Provider, type ProviderDocument, type ProviderSpec } from './providerDocument.js';
import { isLoopbackHost } from '../outbound/policy.js';
import type { ProjectDocument } from '../project/documents.js';

/**
 * What an admin-saved document may name as `${VAR}`: a document from the API must not be able to
 * send any other server secret (the signing key, the database URL) to a URL of its choosing.
 */
export const ADMIN_VARIABLE_PREFIX = 'SVC_OAUTH_';

/** The only fields `${VAR}` is resolved in: anywhere else a value would travel in a redirect or a URL. */
const CREDENTIAL_FIELDS = ['client_id', 'client_secret'] as const;

/** client_id travels in every sign-in redirect, to anyone: it may only name a variable that holds an identifier. */
const IDENTIFIER_VARIABLE = /_ID$/;

/** Every URL the browser or svc contacts, by document field. */
const ENDPOINT_FIELDS = { auth_url: 'authUrl', token_url: 'tokenUrl', userinfo_url: 'userinfoUrl', emails_url: 'emailsUrl', jwks_url: 'jwksUrl' } as const;
export type EndpointField = keyof typeof ENDPOINT_FIELDS;

/** The endpoints of a document: its own, else the built-in defaults of its kind. */
export function endpointsOf(spec: ProviderSpec): Partial<Record<EndpointField, string>> {
  const defaults = builtIn(spec.provider, spec.tenant_id ?? 'common');
  const endpoints: Partial<Record<EndpointField, string>> = {};
  for (const [field, key] of Object.entries(ENDPOINT_FIELDS) as [EndpointField, (typeof ENDPOINT_FIELDS)[EndpointField]][]) {
    const value = spec[field] ?? defaults[key];
    if (value !== undefined) endpoints[field] = value;
  }
  return endpoints;
}

/** Turns a configured document into a Provider; answers the `${VAR}`s that were unset, and what is wrong with it. */
export function resolveProvider(
  name: string,
  document: ProviderDocument,
  source: Provider['source'],
  settings: Pick<Settings, 'environment' | 'oauth'>,
): { provider?: Provider; missing: string[]; problems: string[] } {
  const spec = document.spec;
  const credentials = resolveCredentials(spec, source, settings.environment);
  const endpoints = endpointsOf(spec);
  const defaults = builtIn(spec.provider, spec.tenant_id ?? 'common');
  const problems = [...credentials.problems];
  if (!endpoints.auth_url || !endpoints.token_url) problems.push('a custom provider needs auth_url and token_url');
  if (spec.provider === 'custom' && !spec.userinfo_url && !spec.issuer) problems.push('a custom provider needs userinfo_url or issuer');
  // An ID token is only believed with its signature checked: an issuer needs the key set to check it.
  if ((spec.issuer ?? defaults.issuer) && !endpoints.jwks_url) problems.push('an OIDC provider (issuer set) needs jwks_url');
  problems.push(...schemeProblems(endpoints));
  if (problems.length > 0) return { missing: [], problems: problems.map((p) => `federation provider ${name}: ${p}`) };
  if (credentials.missing.length > 0) return { missing: credentials.missing, problems: [] };
  const fallback = settings.oauth.clientCredentials[name.toLowerCase()] ?? settings.oauth.clientCredentials[spec.provider] ?? {};
  return {
    missing: [],
    problems: [],
    provider: {
      name,
      kind: spec.provider,
      enabled: document.enabled !== false,
      source,
      clientId: credentials.clientId || fallback.clientId,
      clientSecret: credentials.clientSecret || fallback.clientSecret,
      authUrl: endpoints.auth_url!,
      tokenUrl: endpoints.token_url!,
      userinfoUrl: endpoints.userinfo_url,
      emailsUrl: endpoints.emails_url,
      issuer: spec.issuer ?? defaults.issuer,
      jwksUrl: endpoints.jwks_url,
      scope: spec.scope ?? defaults.scope ?? 'openid email profile',
      tenantId: spec.tenant_id,
      allowedDomains: (spec.allowed_domains ?? []).map((d) => d.toLowerCase()),
      defaultRole: spec.default_role,
      document,
    },
  };
}

/** `${VAR}`s of the credential fields, resolved under the rules above; a `${VAR}` anywhere else is a problem. */
function resolveCredentials(
  spec: ProviderSpec,
  source: Provider['source'],
  environment: Readonly<Record<string, string>>,
): { clientId?: string; clientSecret?: string; missing: string[]; problems: string[] } {
  const problems: string[] = [];
  for (const [field, value] of Object.entries(spec)) {
    if ((CREDENTIAL_FIELDS as readonly string[]).includes(field)) continue;
    const named = [...new Set(interpolateEnvironment(value, {}).referenced)];
    if (named.length > 0) problems.push(`${field} names ${named.map((v) => `\${${v}}`).join(', ')}: \${VAR} is resolved only in client_id and client_secret`);
  }
  const missing: string[] = [];
  const resolved: Partial<Record<(typeof CREDENTIAL_FIELDS)[number], string>> = {};
  for (const field of CREDENTIAL_FIELDS) {
    const raw = spec[field];
    if (raw === undefined) continue;
    const { value, missing: unset, referenced } = interpolateEnvironment(raw, environment);
    const foreign = source === 'admin' ? referenced.filter((variable) => !variable.startsWith(ADMIN_VARIABLE_PREFIX)) : [];
    if (foreign.length > 0)
      problems.push(`a document saved through the API may only name \${${ADMIN_VARIABLE_PREFIX}*} variables, not ${[...new Set(foreign)].join(', ')}`);
    const secretLike = field === 'client_id' ? referenced.filter((variable) => !IDENTIFIER_VARIABLE.test(variable)) : [];
    if (secretLike.length > 0) {
      problems.push(
        `client_id names ${[...new Set(secretLike)].join(', ')}, but may only name variables ending in _ID: client_id is published in every sign-in redirect`,
      );
    }
    missing.push(...unset);
    resolved[field] = value;
  }
  return { clientId: resolved.client_id, clientSecret: resolved.client_secret, missing: [...new Set(missing)], problems };
}

/** All https, or all on loopback (a local test provider): one loopback URL must not let the others use plain http. */
function schemeProblems(endpoints: Partial<Record<EndpointField, string>>): string[] {
  const urls = Object.entries(endpoints) as [EndpointField, string][];
  const parsed = urls.map(([field, value]) => [field, value, URL.canParse(value) ? new URL(value) : undefined] as const);
  const unreadable = parsed.filter(([, , url]) => url === undefined).map(([field, value]) => `${field} (${value}) is not a URL`);
  if (unreadable.length > 0) return unreadable;
  if (parsed.every(([, , url]) => isLoopbackHost(url!.hostname))) return [];
  return parsed
    .filter(([, , url]) => url!.protocol !== 'https:')
    .map(([field, value]) => `${field} (${value}) must be https: plain http is allowed only when every endpoint of the provider is on loopback`);
}

export function documentOf(body: Record<string, unknown>, name: string): ProviderDocument {
  return {
    kind: 'FederationProvider',
    version: 'v1',
    metadata: { name },
    enabled: body.enabled !== false,
    spec: body.spec as ProviderSpec,
  };
}

/**
 * Project documents plus google, github and microsoft, which always exist: a built-in without a document
 * takes SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET, and without them answers 501 (no credentials).
 */
export function projectProviders(
  documents: ProjectDocument[],
  settings: Pick<Settings, 'environment' | 'oauth'>,
): {
  providers: Provider[];
  problems: string[];
  warnings: string[];
} {
  const providers: Provider[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const document of documents.filter((d) => d.kind === 'FederationProvider')) {
    const issues = providerDocumentSchema.issues(document.body);
    if (issues.length > 0) {
      problems.push(...issues.map((i) => `${document.file}: ${i.loc.slice(1).join('.')}: ${i.msg}`));
      continue;
    }
    const resolved = resolveProvider(document.name, documentOf(document.body, document.name), 'project', settings);
    if (resolved.missing.length > 0)
      warnings.push(`${document.file}: federation provider ${document.name} skipped: ${[...new Set(resolved.missing)].join(', ')} not set`);
    problems.push(...resolved.problems.map((p) => `${document.file}: ${p}`));
    if (resolved.provider) providers.push(resolved.provider);
  }
  for (const kind of ['google', 'github', 'microsoft'] as const) {
    if (providers.some((p) => p.name === kind)) continue;
    const resolved = resolveProvider(
      kind,
      { kind: 'FederationProvider', version: 'v1', metadata: { name: kind }, enabled: true, spec: { provider: kind } },
      'environment',
      settings,
    );
    if (resolved.provider) providers.push(resolved.provider);
  }
  return { providers, problems, warnings };
}

/** The document with its secret hidden: what every read answers. */
export function redacted(provider: Provider): JsonObject {
  const spec = { ...provider.document.spec } as JsonObject;
  if (spec.client_secret !== undefined) spec.client_secret = REDACTED;
  return {
    kind: 'FederationProvider',
    version: 'v1',
    metadata: { name: provider.name },
    enabled: provider.enabled,
    source: provider.source,
    spec,
    has_credentials: Boolean(provider.clientId && provider.clientSecret),
  };
}
