// IAM (iam:admin): the users (GET /auth/admin/users, a page at a time) with a new user, their roles,
// disable/enable and delete; the roles with their scopes (GET /auth/admin/roles), and for deployment
// admins a new role, its scopes from the scopes palette, and delete; and the palette itself
// (GET /admin/scopes): every scope the service enforces, by where it comes from.
import './admin.css';
import { useState } from 'react';
import type { AdminRole, AdminUser, ScopesPalette } from '../../../src/client/index.js';
import { adminAbilities } from '../adminAccess.js';
import { ConfirmButton, usePanel } from '../forms.js';
import { ErrorNote, useLoaded, useTitle, type Loaded } from '../hooks.js';
import { messageOf, type Session } from '../session.js';
import { formatTime } from '../ui.js';
import { RoleForm, UserForm } from './IamForms.js';
import { Palette, ScopeList } from './IamPalette.js';

const USERS_PAGE = 50;

/** A change from a row's button: busy while it runs, its failure shown, a notice and a reload after. */
function useRowChange(onChanged: (notice: string) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const change = async (what: string, call: () => Promise<unknown>, notice: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await call();
      onChanged(notice);
    } catch (failure) {
      setError(`${what}: ${messageOf(failure)}`);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, change };
}

type RowChange = ReturnType<typeof useRowChange>['change'];

const nameOf = (user: AdminUser): string => user.email ?? user.phone_number ?? user.id;

function UserActions({ session, user, busy, change, onRoles }: { session: Session; user: AdminUser; busy: boolean; change: RowChange; onRoles: () => void }) {
  const name = nameOf(user);
  const focusTitle = () => document.getElementById('users-title')?.focus();
  return (
    <>
      <button type="button" className="secondary" aria-label={`Roles of ${name}`} onClick={onRoles}>
        Roles…
      </button>
      <button
        type="button"
        className="secondary"
        disabled={busy}
        aria-label={`${user.is_active ? 'Disable' : 'Enable'} ${name}`}
        onClick={() =>
          void change(name, () => session.client.iam.updateUser(user.id, { is_active: !user.is_active }), `${name} ${user.is_active ? 'disabled' : 'enabled'}.`)
        }
      >
        {user.is_active ? 'Disable' : 'Enable'}
      </button>
      <ConfirmButton
        label="Delete"
        what={name}
        busy={busy}
        onConfirm={() => void change(name, () => session.client.iam.deleteUser(user.id).then(focusTitle), `${name} deleted.`)}
      />
    </>
  );
}

interface UserTableProps {
  session: Session;
  users: AdminUser[] | undefined;
  busy: boolean;
  change: RowChange;
  onRoles: (user: AdminUser) => void;
}

function UserTable({ session, users, busy, change, onRoles }: UserTableProps) {
  return (
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
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {users?.map((user) => (
            <tr key={user.id} data-user={user.email ?? user.id}>
              <th scope="row">{user.email ?? user.phone_number ?? <span className="muted">erased</span>}</th>
              <td>{user.is_active ? 'yes' : 'no'}</td>
              <td>{(user.roles ?? []).map((role) => role.name).join(', ')}</td>
              <td>{user.tenant ?? ''}</td>
              <td>{[user.has_password ? 'password' : '', user.federated_provider ?? ''].filter(Boolean).join(', ')}</td>
              <td className="nowrap">{formatTime(user.created_at)}</td>
              <td className="row-actions">
                <UserActions session={session} user={user} busy={busy} change={change} onRoles={() => onRoles(user)} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface UsersProps {
  session: Session;
  roles: AdminRole[];
  /** Changes on this page so far: the list is read again after each. */
  version: number;
  onChanged: (notice: string) => void;
}

function Users({ session, roles, version, onChanged }: UsersProps) {
  const [offset, setOffset] = useState(0);
  const users = useLoaded(() => session.client.iam.users({ limit: USERS_PAGE, offset }), [session, offset, version]);
  const panel = usePanel<{ user: AdminUser | undefined }>(() => document.getElementById('users-title'));
  const { busy, error, change } = useRowChange(onChanged);
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title" tabIndex={-1}>
        Users
      </h2>
      <div className="toolbar">
        <button type="button" onClick={() => panel.show({ user: undefined })}>
          New user
        </button>
      </div>
      {panel.open && (
        <UserForm
          key={panel.open.user?.id ?? 'new'}
          session={session}
          roles={roles}
          user={panel.open.user}
          onCancel={panel.close}
          onSaved={(notice) => {
            panel.close();
            onChanged(notice);
          }}
        />
      )}
      <ErrorNote error={users.error ?? error} />
      <UserTable session={session} users={users.value} busy={busy} change={change} onRoles={(user) => panel.show({ user })} />
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

interface RoleTableProps {
  session: Session;
  roles: AdminRole[] | undefined;
  canChange: boolean;
  busy: boolean;
  change: RowChange;
  onScopes: (role: AdminRole) => void;
}

function RoleTable({ session, roles, canChange, busy, change, onScopes }: RoleTableProps) {
  const focusTitle = () => document.getElementById('roles-title')?.focus();
  return (
    <div className="table-scroll">
      <table className="roles">
        <caption className="visually-hidden">Roles and the scopes they grant</caption>
        <thead>
          <tr>
            <th scope="col">Role</th>
            <th scope="col">Description</th>
            <th scope="col">Scopes</th>
            {canChange && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {roles?.map((role) => (
            <tr key={role.id} data-role={role.name}>
              <th scope="row">{role.name}</th>
              <td>{role.description ?? ''}</td>
              <td>
                <ScopeList scopes={role.scopes} />
              </td>
              {canChange && (
                <td className="row-actions">
                  <button type="button" className="secondary" aria-label={`Scopes of ${role.name}`} onClick={() => onScopes(role)}>
                    Scopes…
                  </button>
                  <ConfirmButton
                    label="Delete"
                    what={`role ${role.name}`}
                    busy={busy}
                    onConfirm={() => void change(role.name, () => session.client.iam.deleteRole(role.id).then(focusTitle), `Role ${role.name} deleted.`)}
                  />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

interface RolesProps {
  session: Session;
  roles: Loaded<AdminRole[]>;
  /** Deployment admins change roles; the palette offers the scopes. */
  palette: ScopesPalette | undefined;
  canChange: boolean;
  onChanged: (notice: string) => void;
}

function Roles({ session, roles, palette, canChange, onChanged }: RolesProps) {
  const panel = usePanel<{ role: AdminRole | undefined }>(() => document.getElementById('roles-title'));
  const { busy, error, change } = useRowChange(onChanged);
  return (
    <section aria-labelledby="roles-title">
      <h2 id="roles-title" tabIndex={-1}>
        Roles
      </h2>
      {canChange && (
        <div className="toolbar">
          <button type="button" onClick={() => panel.show({ role: undefined })}>
            New role
          </button>
        </div>
      )}
      {panel.open && (
        <RoleForm
          key={panel.open.role?.id ?? 'new'}
          session={session}
          palette={palette}
          role={panel.open.role}
          onCancel={panel.close}
          onSaved={(notice) => {
            panel.close();
            onChanged(notice);
          }}
        />
      )}
      <ErrorNote error={roles.error ?? error} />
      <RoleTable session={session} roles={roles.value} canChange={canChange} busy={busy} change={change} onScopes={(role) => panel.show({ role })} />
    </section>
  );
}

export function IamPage({ session }: { session: Session }) {
  useTitle('IAM');
  const can = adminAbilities(session.identity);
  const [version, setVersion] = useState(0);
  const [notice, setNotice] = useState('');
  const roles = useLoaded(() => session.client.iam.roles(), [session, version]);
  const palette = useLoaded(() => (can.deploymentAdmin ? session.client.iam.scopes() : Promise.resolve(undefined)), [session, can.deploymentAdmin]);
  const changed = (text: string) => {
    setNotice(text);
    setVersion((n) => n + 1);
  };
  return (
    <section aria-labelledby="iam-title">
      <h1 id="iam-title">Users, roles and scopes</h1>
      <p role="status" className="notice">
        {notice}
      </p>
      <Users session={session} roles={roles.value ?? []} version={version} onChanged={changed} />
      <Roles session={session} roles={roles} palette={palette.value} canChange={can.deploymentAdmin} onChanged={changed} />
      {can.deploymentAdmin && <Palette palette={palette} />}
    </section>
  );
}
