// The scopes palette of IAM (GET /admin/scopes, deployment admins): every scope the service enforces,
// by where it comes from; and a role's scopes as a list.
import type { ScopesPalette } from '../../../src/client/index.js';
import { ErrorNote, type Loaded } from '../hooks.js';

export const ScopeList = ({ scopes }: { scopes: string[] }) => (
  <ul className="scopes">
    {scopes.map((scope) => (
      <li key={scope}>
        <code>{scope}</code>
      </li>
    ))}
  </ul>
);

function paletteRows(palette: ScopesPalette): [string, string, string][] {
  return [
    ...palette.system.map((scope): [string, string, string] => ['system', 'the service', scope]),
    ...Object.entries(palette.workflows).map(([workflow, scope]): [string, string, string] => ['workflow', workflow, scope]),
    ...Object.entries(palette.crud).flatMap(([model, operations]) =>
      Object.entries(operations).map(([operation, scope]): [string, string, string] => ['model', `${model} ${operation}`, scope]),
    ),
  ];
}

export function Palette({ palette }: { palette: Loaded<ScopesPalette | undefined> }) {
  return (
    <section aria-labelledby="palette-title">
      <h2 id="palette-title">Scopes palette</h2>
      <p className="muted">
        Every scope the service enforces, by where it comes from{palette.value && !palette.value.crud_api_enabled ? ' (the CRUD API is off)' : ''}.
      </p>
      <ErrorNote error={palette.error} />
      <div className="table-scroll">
        <table className="palette">
          <caption className="visually-hidden">Scopes by source</caption>
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">What</th>
              <th scope="col">Scope</th>
            </tr>
          </thead>
          <tbody>
            {palette.value &&
              paletteRows(palette.value).map(([source, what, scope]) => (
                <tr key={`${source} ${what}`} data-scope={scope}>
                  <td>{source}</td>
                  <td>{what}</td>
                  <td>
                    <code>{scope}</code>
                  </td>
                </tr>
              ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
