// Pages of the console that are not built yet: said plainly, with what the API already offers.
const NOT_YET: [string, string][] = [
  ['IAM changes: users and roles created, roles granted and scoped (the IAM page reads only)', '/auth/admin/users, /auth/admin/roles'],
  ['Model records created, edited and deleted (the Models page reads only)', 'POST, PATCH, DELETE /models/{model}/'],
];

export function NotYetPage() {
  return (
    <section aria-labelledby="more-title">
      <h1 id="more-title">Not built yet</h1>
      <p>These console pages are planned; until they land, the API and its docs cover them.</p>
      <table>
        <caption className="visually-hidden">Pages not built yet and the API routes behind them</caption>
        <thead>
          <tr>
            <th scope="col">Page</th>
            <th scope="col">API today</th>
          </tr>
        </thead>
        <tbody>
          {NOT_YET.map(([page, api]) => (
            <tr key={page}>
              <td>{page}</td>
              <td>
                <code>{api}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>
        <a href="/docs">API docs (Swagger UI)</a>
      </p>
    </section>
  );
}
