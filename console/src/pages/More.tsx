// The last page of the navigation: where the rest of the service is described (its API references).
const REFERENCES: [string, string, string][] = [
  ['/docs', 'API docs (Swagger UI)', 'every route, with a form to try it'],
  ['/redoc', 'API reference (ReDoc)', 'the same document, for reading'],
  ['/openapi.json', 'OpenAPI document', 'for code generators and the TypeScript client'],
];

export function MorePage() {
  return (
    <section aria-labelledby="more-title">
      <h1 id="more-title">More</h1>
      <p>Everything the console shows comes from the service&apos;s public API; these pages describe all of it.</p>
      <ul>
        {REFERENCES.map(([href, name, what]) => (
          <li key={href}>
            <a href={href}>{name}</a>: {what}
          </li>
        ))}
      </ul>
    </section>
  );
}
