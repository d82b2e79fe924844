// Artifacts (artifacts:read): every artifact with its versions (GET /api/artifacts), and the content
// and hash of the version chosen (GET /api/artifacts/{name}?version=). The choice is in the address.
import './admin.css';
import { Link, useSearchParams } from 'react-router';
import type { Artifact, ArtifactSummary, Json } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import type { Session } from '../session.js';
import { JsonView, formatTime } from '../ui.js';

const linkTo = (name: string, version?: string) => `?${new URLSearchParams(version ? { name, version } : { name }).toString()}`;

function ArtifactList({ artifacts, chosen }: { artifacts: ArtifactSummary[]; chosen: string | null }) {
  return (
    <div className="table-scroll">
      <table className="artifacts">
        <caption className="visually-hidden">Artifacts and their versions</caption>
        <thead>
          <tr>
            <th scope="col">Artifact</th>
            <th scope="col">Type</th>
            <th scope="col">Source</th>
            <th scope="col">Versions</th>
          </tr>
        </thead>
        <tbody>
          {artifacts.map((artifact) => (
            <tr key={artifact.name} data-artifact={artifact.name} aria-current={artifact.name === chosen ? 'true' : undefined}>
              <th scope="row">
                <Link to={linkTo(artifact.name)}>{artifact.name}</Link>
              </th>
              <td>{artifact.type}</td>
              <td>{artifact.source}</td>
              <td>
                {artifact.versions.map((version, index) => (
                  <span key={version.version}>
                    {index > 0 && ', '}
                    <Link to={linkTo(artifact.name, version.version)} aria-label={`${artifact.name} version ${version.version}`}>
                      {version.version}
                    </Link>
                  </span>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ArtifactContent({ artifact }: { artifact: Artifact }) {
  const label = `Content of ${artifact.name} version ${artifact.version}`;
  return (
    <article className="panel" aria-labelledby="artifact-title" data-version={artifact.version}>
      <h2 id="artifact-title">
        {artifact.name} <span className="muted">version {artifact.version}</span>
      </h2>
      <dl className="summary">
        <dt>Type</dt>
        <dd>{artifact.type}</dd>
        <dt>Source</dt>
        <dd>{artifact.source ?? ''}</dd>
        <dt>Hash</dt>
        <dd>
          <code>{artifact.hash}</code>
        </dd>
        {artifact.created_at && (
          <>
            <dt>Uploaded</dt>
            <dd>{formatTime(artifact.created_at)}</dd>
          </>
        )}
      </dl>
      {artifact.description && <p>{artifact.description}</p>}
      {typeof artifact.content === 'string' ? (
        <pre className="json" aria-label={label} tabIndex={0}>
          {artifact.content}
        </pre>
      ) : (
        <JsonView value={artifact.content as Json} label={label} />
      )}
    </article>
  );
}

export function ArtifactsPage({ session }: { session: Session }) {
  useTitle('Artifacts');
  const [params] = useSearchParams();
  const name = params.get('name');
  const version = params.get('version') ?? undefined;
  const artifacts = useLoaded(() => session.client.artifacts.list(), [session]);
  const chosen = useLoaded(() => (name ? session.client.artifacts.get(name, version) : Promise.resolve(undefined)), [name, version]);
  return (
    <section aria-labelledby="artifacts-title">
      <h1 id="artifacts-title">Artifacts</h1>
      <ErrorNote error={artifacts.error} />
      {artifacts.value?.length === 0 && <p>No artifact yet.</p>}
      {artifacts.value && artifacts.value.length > 0 && <ArtifactList artifacts={artifacts.value} chosen={name} />}
      {!name && artifacts.value && artifacts.value.length > 0 && <p className="muted">Choose an artifact or one of its versions to read it.</p>}
      <ErrorNote error={chosen.error} />
      {chosen.value && <ArtifactContent artifact={chosen.value} />}
    </section>
  );
}
