// IAM (iam:admin): the users (GET /auth/admin/users, a page at a time), the roles with their scopes
// (GET /auth/admin/roles), and, for deployment admins, the scopes palette (GET /admin/scopes):
// every scope the service enforces, by where it comes from.
import './admin.css';
import { useState } from 'react';
import type { ScopesPalette } from '../../../src/client/index.js';
import { adminAbilities } from '../adminAccess.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import type { Session } from '../session.js';
import { formatTime } from '../ui.js';

const USERS_PAGE = 50;

function Users({ session }: { session: Session }) {
  const [offset, setOffset] = useState(0);
  const users = useLoaded(() => session.client.iam.users({ limit: USERS_PAGE, offset }), [session, offset]);
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <ErrorNote error={users.error} />
      <div className="table-scroll">
        <table className="users">
          <caption className="visually-hidden">Users and their roles</caption>
          <thead>
            <tr>
              <th scope="col">Email or phone</th>
              <th scope="col">Active</th>
              <th scope="col">Roles</th>
              <th scope="col">Tenant</th>
              <th scope="col">Signs in with</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {users.value?.map((user) => (
              <tr key={user.id} data-user={user.email ?? user.id}>
                <th scope="row">{user.email ?? user.phone_number ?? <span className="muted">erased</span>}</th>
                <td>{user.is_active ? 'yes' : 'no'}</td>
                <td>{(user.roles ?? []).map((role) => role.name).join(', ')}</td>
                <td>{user.tenant ?? ''}</td>
                <td>{[user.has_password ? 'password' : '', user.federated_provider ?? ''].filter(Boolean).join(', ')}</td>
                <td className="nowrap">{formatTime(user.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div className="pager">
        {offset > 0 && (
          <button type="button" className="secondary" onClick={() => setOffset(Math.max(0, offset - USERS_PAGE))}>
            Previous users
          </button>
        )}
        {users.value?.length === USERS_PAGE && (
          <button type="button" onClick={() => setOffset(offset + USERS_PAGE)}>
            Next users
          </button>
        )}
      </div>
    </section>
  );
}

function Roles({ session }: { session: Session }) {
  const roles = useLoaded(() => session.client.iam.roles(), [session]);
  return (
    <section aria-labelledby="roles-title">
      <h2 id="roles-title">Roles</h2>
      <ErrorNote error={roles.error} />
      <div className="table-scroll">
        <table className="roles">
          <caption className="visually-hidden">Roles and the scopes they grant</caption>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">Description</th>
              <th scope="col">Scopes</th>
            </tr>
          </thead>
          <tbody>
            {roles.value?.map((role) => (
              <tr key={role.id} data-role={role.name}>
                <th scope="row">{role.name}</th>
                <td>{role.description ?? ''}</td>
                <td>
                  <ScopeList scopes={role.scopes} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const ScopeList = ({ scopes }: { scopes: string[] }) => (
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

function Palette({ session }: { session: Session }) {
  const palette = useLoaded(() => session.client.iam.scopes(), [session]);
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

export function IamPage({ session }: { session: Session }) {
  useTitle('IAM');
  const can = adminAbilities(session.identity);
  return (
    <section aria-labelledby="iam-title">
      <h1 id="iam-title">Users, roles and scopes</h1>
      <Users session={session} />
      <Roles session={session} />
      {can.deploymentAdmin && <Palette session={session} />}
    </section>
  );
}
