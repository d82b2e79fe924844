// Federation providers: FederationProvider documents (federation/ and the admin API), built-in
// endpoints for google, github and microsoft, `${VAR}` secrets, SVC_OAUTH_<PROVIDER>_* fallbacks.
import { interpolateEnvironment, type Settings } from '../config/settings.js';
import type { JsonObject } from '../kernel/json.js';
import { compileValidator } from '../kernel/validation.js';
import type { ProjectDocument } from '../project/documents.js';

export const PROVIDER_KINDS = ['google', 'github', 'microsoft', 'custom'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];
export const REDACTED = '***';

export interface ProviderSpec {
  provider: ProviderKind;
  client_id?: string;
  client_secret?: string;
  auth_url?: string;
  token_url?: string;
  userinfo_url?: string;
  /** Overrides (any provider): OIDC issuer and key set, GitHub's email list. */
  issuer?: string;
  jwks_url?: string;
  emails_url?: string;
  scope?: string;
  tenant_id?: string;
  allowed_domains?: string[];
  default_role?: string;
}

export interface ProviderDocument {
  kind: 'FederationProvider';
  version: 'v1';
  metadata: { name: string };
  enabled: boolean;
  spec: ProviderSpec;
}

/** A provider ready for the protocol: endpoints resolved, credentials possibly missing (501). */
export interface Provider {
  name: string;
  kind: ProviderKind;
  enabled: boolean;
  source: 'project' | 'admin' | 'environment';
  clientId: string | undefined;
  clientSecret: string | undefined;
  authUrl: string;
  tokenUrl: string;
  userinfoUrl: string | undefined;
  emailsUrl: string | undefined;
  /** Set for OpenID Connect providers: the ID token is checked against it. */
  issuer: string | undefined;
  jwksUrl: string | undefined;
  scope: string;
  tenantId: string | undefined;
  allowedDomains: string[];
  defaultRole: string | undefined;
  /** The document as configured (secrets unresolved), for admin reads. */
  document: ProviderDocument;
}

const url = { type: 'string', pattern: '^https?://' };
export const providerDocumentSchema = compileValidator<ProviderDocument>({
  type: 'object',
  required: ['spec'],
  additionalProperties: false,
  properties: {
    kind: { const: 'FederationProvider' },
    version: { const: 'v1' },
    metadata: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
    enabled: { type: 'boolean' },
    spec: {
      type: 'object',
      required: ['provider'],
      additionalProperties: false,
      properties: {
        provider: { enum: [...PROVIDER_KINDS] },
        client_id: { type: 'string' },
        client_secret: { type: 'string' },
        auth_url: url,
        token_url: url,
        userinfo_url: url,
        issuer: { type: 'string' },
        jwks_url: url,
        emails_url: url,
        scope: { type: 'string' },
        tenant_id: { type: 'string', pattern: '^[A-Za-z0-9.-]{1,64}$' },
        allowed_domains: { type: 'array', items: { type: 'string' } },
        default_role: { type: 'string' },
      },
    },
  },
});

function builtIn(kind: ProviderKind, tenantId: string): Partial<Record<'authUrl' | 'tokenUrl' | 'userinfoUrl' | 'emailsUrl' | 'issuer' | 'jwksUrl' | 'scope', string>> {
  switch (kind) {
    case 'google':
      return {
        authUrl: 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: 'https://oauth2.googleapis.com/token',
        userinfoUrl: 'https://openidconnect.googleapis.com/v1/userinfo',
        issuer: 'https://accounts.google.com',
        jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
        scope: 'openid email profile',
      };
    case 'github':
      return {
        authUrl: 'https://github.com/login/oauth/authorize',
        tokenUrl: 'https://github.com/login/oauth/access_token',
        userinfoUrl: 'https://api.github.com/user',
        emailsUrl: 'https://api.github.com/user/emails',
        scope: 'read:user user:email',
      };
    case 'microsoft':
      return {
        authUrl: `https://login.microsoftonline.com/${tenantId}/oauth2/v2.0/authorize`,
        tokenUrl: `https://login.microsoftonline.com/${tenantId}/oauth2/v2.0/token`,
        userinfoUrl: 'https://graph.microsoft.com/oidc/userinfo',
        // `{tenantid}` is replaced by the token's `tid` claim (multi-tenant apps).
        issuer: `https://login.microsoftonline.com/${tenantId === 'common' || tenantId === 'organizations' ? '{tenantid}' : tenantId}/v2.0`,
        jwksUrl: `https://login.microsoftonline.com/${tenantId}/discovery/v2.0/keys`,
        scope: 'openid email profile',
      };
    default:
      return { scope: 'openid email profile' };
  }
}

/**
 * What an admin-saved document may name as `${VAR}`: a document from the API must not be able to
 * send any other server secret (the signing key, the database URL) to a URL of its choosing.
 */
export const ADMIN_VARIABLE_PREFIX = 'SVC_OAUTH_';

/** Turns a configured document into a Provider; answers the `${VAR}`s that were unset. */
export function resolveProvider(
  name: string,
  document: ProviderDocument,
  source: Provider['source'],
  settings: Pick<Settings, 'environment' | 'oauth'>,
): { provider?: Provider; missing: string[]; problems: string[] } {
  const { value: spec, missing, referenced } = interpolateEnvironment(document.spec, settings.environment);
  const forbidden = source === 'admin' ? referenced.filter((variable) => !variable.startsWith(ADMIN_VARIABLE_PREFIX)) : [];
  if (forbidden.length > 0) {
    return { missing: [], problems: [`federation provider ${name}: a document saved through the API may only name \${${ADMIN_VARIABLE_PREFIX}*} variables, not ${[...new Set(forbidden)].join(', ')}`] };
  }
  if (missing.length > 0) return { missing, problems: [] };
  const fallback = settings.oauth.clientCredentials[name.toLowerCase()] ?? settings.oauth.clientCredentials[spec.provider] ?? {};
  const defaults = builtIn(spec.provider, spec.tenant_id ?? 'common');
  const authUrl = spec.auth_url ?? defaults.authUrl;
  const tokenUrl = spec.token_url ?? defaults.tokenUrl;
  const problems: string[] = [];
  if (!authUrl || !tokenUrl) problems.push(`federation provider ${name}: a custom provider needs auth_url and token_url`);
  if (spec.provider === 'custom' && !spec.userinfo_url && !spec.issuer) problems.push(`federation provider ${name}: a custom provider needs userinfo_url or issuer`);
  // An ID token is only believed with its signature checked: an issuer needs the key set to check it.
  if ((spec.issuer ?? defaults.issuer) && !(spec.jwks_url ?? defaults.jwksUrl)) problems.push(`federation provider ${name}: an OIDC provider (issuer set) needs jwks_url`);
  if (problems.length > 0) return { missing: [], problems };
  return {
    missing: [],
    problems,
    provider: {
      name,
      kind: spec.provider,
      enabled: document.enabled !== false,
      source,
      clientId: spec.client_id || fallback.clientId,
      clientSecret: spec.client_secret || fallback.clientSecret,
      authUrl: authUrl!,
      tokenUrl: tokenUrl!,
      userinfoUrl: spec.userinfo_url ?? defaults.userinfoUrl,
      emailsUrl: spec.emails_url ?? defaults.emailsUrl,
      issuer: spec.issuer ?? defaults.issuer,
      jwksUrl: spec.jwks_url ?? defaults.jwksUrl,
      scope: spec.scope ?? defaults.scope ?? 'openid email profile',
      tenantId: spec.tenant_id,
      allowedDomains: (spec.allowed_domains ?? []).map((d) => d.toLowerCase()),
      defaultRole: spec.default_role,
      document,
    },
  };
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

/** Project documents plus, for built-ins without one, SVC_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET. */
export function projectProviders(documents: ProjectDocument[], settings: Pick<Settings, 'environment' | 'oauth'>): {
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
    if (resolved.missing.length > 0) warnings.push(`${document.file}: federation provider ${document.name} skipped: ${[...new Set(resolved.missing)].join(', ')} not set`);
    problems.push(...resolved.problems.map((p) => `${document.file}: ${p}`));
    if (resolved.provider) providers.push(resolved.provider);
  }
  for (const kind of ['google', 'github', 'microsoft'] as const) {
    const credentials = settings.oauth.clientCredentials[kind];
    if (!credentials || providers.some((p) => p.name === kind)) continue;
    const resolved = resolveProvider(kind, { kind: 'FederationProvider', version: 'v1', metadata: { name: kind }, enabled: true, spec: { provider: kind } }, 'environment', settings);
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
