// API docs (under /insight only, the developer portal's /insight/api-docs): the service's Swagger UI
// (/docs) in a frame, which /insight's page policy allows (frame-src 'self') and /console's does not.
import { useTitle } from '../hooks.js';

export function ApiDocsPage() {
  useTitle('API docs');
  return (
    <section aria-labelledby="api-docs-title" className="api-docs">
      <h1 id="api-docs-title">API docs</h1>
      <p>
        Swagger UI over <a href="/openapi.json">/openapi.json</a>; also on its own at <a href="/docs">/docs</a>, and as ReDoc at <a href="/redoc">/redoc</a>.
        Its “Authorize” takes the dev key as the bearer token.
      </p>
      <iframe src="/docs" title="Swagger UI: the API's operations" />
    </section>
  );
}
