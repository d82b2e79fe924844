// The IAM write forms: a new user (email, password, roles) or a user's roles, and a new role or a
// role's scopes, chosen from the scopes palette grouped by prefix (`runs:`, `book:`, ...).
import { useState, type FormEvent } from 'react';
import type { AdminRole, AdminUser, ScopesPalette } from '../../../src/client/index.js';
import { FieldProblem, FormAlert, invalidProps, NO_PROBLEMS, PanelHeading, problemsOf, type FormProblems } from '../forms.js';
import type { Session } from '../session.js';

/** Every scope of the palette, and those `extra` names (a role's scopes the palette does not list). */
export function paletteScopes(palette: ScopesPalette | undefined, extra: readonly string[] = []): string[] {
  const crud = Object.values(palette?.crud ?? {}).flatMap((operations) => Object.values(operations));
  return [...new Set([...(palette?.system ?? []), ...Object.values(palette?.workflows ?? {}), ...crud, ...extra])].sort();
}

function byPrefix(scopes: string[]): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const scope of scopes) {
    const prefix = scope.includes(':') ? scope.slice(0, scope.indexOf(':')) : 'other';
    groups.set(prefix, [...(groups.get(prefix) ?? []), scope]);
  }
  return [...groups.entries()];
}

/** Checkboxes named `name`, one per choice, in a fieldset per group. */
function Checklist({ name, legend, groups, checked }: { name: string; legend: string; groups: [string, string[]][]; checked: ReadonlySet<string> }) {
  return (
    <fieldset className="checklist">
      <legend>{legend}</legend>
      {groups.map(([group, choices]) => (
        <fieldset key={group} className="checklist-group">
          {groups.length > 1 && <legend>{group}</legend>}
          {choices.map((choice) => (
            <label key={choice} className="check">
              <input type="checkbox" name={name} value={choice} defaultChecked={checked.has(choice)} /> <code>{choice}</code>
            </label>
          ))}
        </fieldset>
      ))}
    </fieldset>
  );
}

function TextField({
  formId,
  name,
  label,
  problems,
  type = 'text',
  isRequired = false,
}: {
  formId: string;
  name: string;
  label: string;
  problems: FormProblems;
  type?: string;
  isRequired?: boolean;
}) {
  const id = `${formId}-${name}`;
  return (
    <div className="field">
      <label htmlFor={id}>
        {label}
        {isRequired ? <span className="required"> (required)</span> : null}
      </label>
      <input
        id={id}
        name={name}
        type={type}
        required={isRequired}
        autoComplete={type === 'password' ? 'new-password' : 'off'}
        {...invalidProps(formId, name, problems)}
      />
      <FieldProblem formId={formId} field={name} problems={problems} />
    </div>
  );
}

/** The form's submit: its values in, problems out; `busy` while the calls run. */
function useSubmit(fieldNames: string[], run: (form: FormData) => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setBusy(true);
    run(new FormData(event.currentTarget)).then(
      () => setBusy(false),
      (failure: unknown) => {
        setProblems(problemsOf(failure, fieldNames));
        setBusy(false);
      },
    );
  };
  return { busy, problems, submit };
}

const Actions = ({ label, busy, onCancel }: { label: string; busy: boolean; onCancel: () => void }) => (
  <div className="actions">
    <button type="submit" disabled={busy}>
      {label}
    </button>
    <button type="button" className="secondary" onClick={onCancel}>
      Cancel
    </button>
  </div>
);

const chosen = (form: FormData, name: string): string[] => form.getAll(name).map(String);

interface UserFormProps {
  session: Session;
  roles: AdminRole[];
  /** The user whose roles change; none for a new user. */
  user: AdminUser | undefined;
  onSaved: (notice: string) => void;
  onCancel: () => void;
}

/** A new user with its roles (created, then each role assigned), or the roles of `user` (assigned and revoked). */
export function UserForm({ session, roles, user, onSaved, onCancel }: UserFormProps) {
  const formId = 'user-form';
  const held = new Set((user?.roles ?? []).map((role) => role.id));
  const { busy, problems, submit } = useSubmit(['email', 'password'], async (form) => {
    const wanted = new Set(chosen(form, 'role'));
    const id = user ? user.id : (await session.client.iam.createUser({ email: String(form.get('email')), password: String(form.get('password')) })).id;
    for (const role of roles) {
      if (wanted.has(role.id) && !held.has(role.id)) await session.client.iam.assignRole(id, role.id);
      if (!wanted.has(role.id) && held.has(role.id)) await session.client.iam.revokeRole(id, role.id);
    }
    onSaved(user ? `Roles of ${user.email ?? user.id} saved.` : `User ${String(form.get('email'))} created.`);
  });
  return (
    <section aria-labelledby="user-form-title" className="panel">
      <PanelHeading id="user-form-title">{user ? `Roles of ${user.email ?? user.id}` : 'New user'}</PanelHeading>
      <FormAlert formId={formId} problems={problems} />
      <form id={formId} onSubmit={submit} className="schema-form">
        {!user && <TextField formId={formId} name="email" label="Email" type="email" problems={problems} isRequired />}
        {!user && <TextField formId={formId} name="password" label="Password" type="password" problems={problems} isRequired />}
        <fieldset className="checklist">
          <legend>Roles</legend>
          {roles.map((role) => (
            <label key={role.id} className="check">
              <input type="checkbox" name="role" value={role.id} defaultChecked={held.has(role.id)} /> {role.name}
            </label>
          ))}
        </fieldset>
        <Actions label={user ? 'Save roles' : 'Create user'} busy={busy} onCancel={onCancel} />
      </form>
    </section>
  );
}

interface RoleFormProps {
  session: Session;
  palette: ScopesPalette | undefined;
  /** The role whose scopes change; none for a new role. */
  role: AdminRole | undefined;
  onSaved: (notice: string) => void;
  onCancel: () => void;
}

/** A new role (name, description, scopes), or the scopes of `role` (added and removed in one change). */
export function RoleForm({ session, palette, role, onSaved, onCancel }: RoleFormProps) {
  const formId = 'role-form';
  const held = new Set(role?.scopes ?? []);
  const { busy, problems, submit } = useSubmit(['name', 'description', 'scopes'], async (form) => {
    const wanted = chosen(form, 'scope');
    if (!role) {
      const description = String(form.get('description') ?? '');
      await session.client.iam.createRole({ name: String(form.get('name')), ...(description ? { description } : {}), scopes: wanted });
      return onSaved(`Role ${String(form.get('name'))} created.`);
    }
    const add = wanted.filter((scope) => !held.has(scope));
    const remove = [...held].filter((scope) => !wanted.includes(scope));
    await session.client.iam.changeRoleScopes(role.id, { add, remove });
    onSaved(`Scopes of ${role.name} saved.`);
  });
  return (
    <section aria-labelledby="role-form-title" className="panel">
      <PanelHeading id="role-form-title">{role ? `Scopes of ${role.name}` : 'New role'}</PanelHeading>
      <FormAlert formId={formId} problems={problems} />
      <form id={formId} onSubmit={submit} className="schema-form">
        {!role && <TextField formId={formId} name="name" label="Name" problems={problems} isRequired />}
        {!role && <TextField formId={formId} name="description" label="Description" problems={problems} />}
        <Checklist name="scope" legend="Scopes" groups={byPrefix(paletteScopes(palette, role?.scopes))} checked={held} />
        <Actions label={role ? 'Save scopes' : 'Create role'} busy={busy} onCancel={onCancel} />
      </form>
    </section>
  );
}
