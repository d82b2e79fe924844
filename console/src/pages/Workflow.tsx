// One workflow (/console/workflows/{name}): the step graph of its serving version (the manifest of
// GET /api/_system/workflows/{name}), and for iam:admin its versions (GET /admin/workflows) with
// Enable/Disable (PATCH .../toggle) and Fork (POST .../fork: a new, disabled version).
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { WorkflowVersion } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { hasScope, messageOf, type Session } from '../session.js';
import { WorkflowGraph } from '../WorkflowGraph.js';

function ForkForm({ session, name, version, onForked }: { session: Session; name: string; version: string; onForked: (message: string) => void }) {
  const [newVersion, setNewVersion] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const forked = await session.client.workflowVersions.fork(name, version, newVersion.trim());
      setNewVersion('');
      onForked(`Forked ${name} ${forked.source_version} as ${forked.new_version} (${forked.file}), disabled.`);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const id = `fork-${version}`;
  return (
    <form className="inline-form" onSubmit={submit}>
      <label htmlFor={id}>New version from {version}</label>
      <input id={id} value={newVersion} required pattern="[A-Za-z0-9._\-]+" onChange={(event) => setNewVersion(event.target.value)} />
      <button type="submit" className="secondary" disabled={busy}>
        Fork {version}
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function VersionRow(props: { session: Session; name: string; version: WorkflowVersion; onToggle: () => void; onForked: (message: string) => void }) {
  const { version } = props;
  return (
    <tr data-version={version.schema_version} data-enabled={String(version.enabled)}>
      <th scope="row">{version.schema_version}</th>
      <td>{version.enabled ? <span className="badge ok">enabled</span> : <span className="badge">disabled</span>}</td>
      <td>
        <code>
          {version.trigger_method} {version.trigger_path}
        </code>
      </td>
      <td>
        <div className="version-actions">
          <button type="button" className="secondary" onClick={props.onToggle}>
            {version.enabled ? 'Disable' : 'Enable'} {version.schema_version}
          </button>
          <ForkForm session={props.session} name={props.name} version={version.schema_version} onForked={props.onForked} />
        </div>
      </td>
    </tr>
  );
}

function Versions({ session, name }: { session: Session; name: string }) {
  const versions = useLoaded(() => session.client.workflowVersions.list(), [session]);
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const toggle = async (version: WorkflowVersion) => {
    setError(undefined);
    try {
      const toggled = await session.client.workflowVersions.toggle(name, version.schema_version);
      setNotice(`${name} ${toggled.schema_version} is ${toggled.enabled ? 'enabled' : 'disabled'}.`);
      versions.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const rows = versions.value?.[name] ?? [];
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <ErrorNote error={versions.error ?? error} />
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">Versions of {name}</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Trigger</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((version) => (
              <VersionRow
                key={version.schema_version}
                session={session}
                name={name}
                version={version}
                onToggle={() => void toggle(version)}
                onForked={(message) => {
                  setNotice(message);
                  versions.reload();
                }}
              />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function WorkflowPage({ session }: { session: Session }) {
  const name = useParams().name ?? '';
  useTitle(`Workflow ${name}`);
  const manifest = useLoaded(() => {
    // A toggle elsewhere may have changed the serving version: never the cached manifest.
    session.client.invalidateManifest(name);
    return session.client.getManifest(name);
  }, [session, name]);
  const isAdmin = hasScope(session.identity, 'iam:admin');
  return (
    <section aria-labelledby="workflow-title">
      <h1 id="workflow-title">
        Workflow <code>{name}</code>
      </h1>
      <p>
        <Link to={`/workflows?run=${encodeURIComponent(name)}`}>Run {name}…</Link>
      </p>
      {manifest.error ? (
        <p className="muted">
          No enabled version of {name} serves now: {manifest.error}
        </p>
      ) : (
        manifest.value && <WorkflowGraph name={name} steps={manifest.value.steps} />
      )}
      {isAdmin ? <Versions session={session} name={name} /> : <p className="muted">Versions (toggle, fork) need the scope iam:admin.</p>}
    </section>
  );
}
