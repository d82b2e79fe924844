// For iam:admin, under the workflows list: the workflows loaded with no enabled version (GET
// /admin/workflows), each linking to its page where a version can be enabled.
import { Link } from 'react-router';
import { useLoaded } from '../hooks.js';
import { hasScope, type Session } from '../session.js';

function DisabledList({ session, serving }: { session: Session; serving: ReadonlySet<string> }) {
  const versions = useLoaded(() => session.client.workflowVersions.list(), [session]);
  const idle = Object.entries(versions.value ?? {})
    .filter(([name, list]) => !serving.has(name) && list.every((version) => !version.enabled))
    .map(([name]) => name)
    .sort();
  if (idle.length === 0) return null;
  return (
    <section aria-labelledby="disabled-title">
      <h2 id="disabled-title">No enabled version</h2>
      <ul className="disabled-workflows">
        {idle.map((name) => (
          <li key={name}>
            <Link to={`/workflows/${encodeURIComponent(name)}`}>{name}</Link>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function DisabledWorkflows({ session, serving }: { session: Session; serving: ReadonlySet<string> | undefined }) {
  if (!serving || !hasScope(session.identity, 'iam:admin')) return null;
  return <DisabledList session={session} serving={serving} />;
}
