// What a FederationProvider document is (its shape, as checked when saved or loaded) and the endpoints
// the built-in providers have without one.
import { compileValidator } from '../kernel/validation.js';

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

/** The endpoints and scope google, github and microsoft have without configuration. */
export function builtIn(
  kind: ProviderKind,
  tenantId: string,
): Partial<Record<'authUrl' | 'tokenUrl' | 'userinfoUrl' | 'emailsUrl' | 'issuer' | 'jwksUrl' | 'scope', string>> {
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
