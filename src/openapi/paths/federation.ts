// Federated sign-in (/auth/oauth/{provider}/start|callback) and its admin routes (/auth/admin/federation).
// shape: OpenAPI operation tables: one function per route family reads as the API does; splitting them would scatter it.
import type { OpenAPIV3_1 } from 'openapi-types';
import { object, operation, ref, str, type Header, type PathItem } from '../builders.js';

const location = (description: string): Record<string, Header> => ({ Location: { description, schema: { type: 'string', format: 'uri' } } });
const callbackQuery = [
  { name: 'code', schema: str, description: 'The authorization code the provider issued' },
  { name: 'state', schema: str, description: 'The one-time state /start stored (400 when missing, unknown, used, expired or bound to another browser)' },
  { name: 'error', schema: str, description: 'Set by the provider when it refused the login (400)' },
  { name: 'error_description', schema: str },
  { name: 'iss', schema: str, description: 'The issuer (RFC 9207), when the provider sends it' },
];

export function oauthPaths(): Record<string, PathItem> {
  const tags = ['Auth'];
  return {
    '/auth/providers': {
      get: operation({
        operationId: 'listSignInProviders',
        summary: 'The federation providers a user can sign in with now (enabled, with client credentials)',
        tags,
        isPublic: true,
        ok: { status: 200, description: 'Name, kind and the start URL of each provider', schema: { type: 'array', items: ref('SignInProvider') } },
      }),
    },
    '/auth/oauth/{provider}/start': {
      get: operation({
        operationId: 'oauthStart',
        summary: 'Start a federated sign-in: store a one-time state, redirect to the provider',
        tags,
        isPublic: true,
        path: ['provider'],
        description:
          'Sets the cookie `svc_oauth_binding` (`__Secure-svc_oauth_binding` when `SVC_OAUTH_BASE_URL` is https; HttpOnly, SameSite=Lax, path `/auth/oauth/{provider}`) that the callback must carry back.',
        ok: {
          status: 302,
          description: "Redirect to the provider's authorization endpoint (state, PKCE S256, nonce)",
          headers: { ...location("The provider's authorization URL"), 'Set-Cookie': { description: 'svc_oauth_binding', schema: str } },
        },
        errors: [404, 501],
      }),
    },
    '/auth/oauth/{provider}/callback': {
      get: operation({
        operationId: 'oauthCallback',
        summary: 'Finish a federated sign-in: exchange the code, sign the user in or up, answer a token',
        tags,
        isPublic: true,
        path: ['provider'],
        description:
          'Answers the token (`Cache-Control: no-store`), or, when `SVC_OAUTH_UI_REDIRECT_URL` is set, redirects there with the token as query parameter `token`. 403 when the email domain is not allowed, the account is disabled, or an existing account cannot be linked.',
        query: callbackQuery,
        ok: { status: 200, description: 'A token for the signed-in user', schema: ref('TokenResponse') },
        errors: [400, 403, 404, 501],
        extraResponses: {
          302: {
            description: 'Redirect to SVC_OAUTH_UI_REDIRECT_URL with `?token=<access token>` (Referrer-Policy: no-referrer)',
            headers: location('The UI URL with the token') as unknown as Record<string, OpenAPIV3_1.HeaderObject>,
          },
        },
      }),
    },
  };
}

export function federationAdminPaths(): Record<string, PathItem> {
  const tags = ['IAM admin'];
  const scope = 'iam:admin';
  const path = ['name'];
  const provider = ref('FederationProvider');
  const skipped = object(
    {
      metadata: object({ name: str }, ['name']),
      skipped: { type: 'string', description: 'Why the provider is not in effect: the `${SVC_OAUTH_*}` variables it names that are unset' },
    },
    ['metadata', 'skipped'],
  );
  return {
    '/auth/admin/federation': {
      get: operation({
        operationId: 'listFederationProviders',
        deploymentAdmin: true,
        summary: 'Every federation provider in effect (client secrets redacted)',
        tags,
        scope,
        ok: { status: 200, description: 'Providers by name', schema: { type: 'array', items: provider } },
        errors: [403],
      }),
    },
    '/auth/admin/federation/{name}': {
      get: operation({
        operationId: 'getFederationProvider',
        deploymentAdmin: true,
        summary: 'One federation provider (client secret redacted)',
        tags,
        scope,
        path,
        ok: { status: 200, description: 'The provider', schema: provider },
        errors: [403, 404],
      }),
      put: operation({
        operationId: 'saveFederationProvider',
        deploymentAdmin: true,
        summary: 'Create or replace a provider (wins over a project file of the same name)',
        tags,
        scope,
        path,
        description:
          'The name is lower-case letters, digits, `-` and `_`. 400 when it is not, when metadata.name differs from it, or when the provider cannot work or is not allowed (a custom provider without auth_url and token_url, an issuer without jwks_url, a `${VAR}` outside `SVC_OAUTH_*` or outside client_id and client_secret, a client_id naming a variable not ending in `_ID`, endpoints not all https nor all on loopback, or, in production, an endpoint svc requests that the destination policy refuses).',
        body: ref('FederationProviderDocument'),
        ok: {
          status: 200,
          description: 'The saved provider, or `skipped` when a `${SVC_OAUTH_*}` variable it names is unset',
          schema: { oneOf: [provider, skipped] },
        },
        errors: [400, 403, 409],
      }),
      delete: operation({
        operationId: 'deleteFederationProvider',
        deploymentAdmin: true,
        summary: "Delete a provider saved through this API (a project file's provider is 409)",
        tags,
        scope,
        path,
        ok: { status: 204, description: 'Deleted' },
        errors: [403, 404, 409],
      }),
    },
  };
}
