// Workflows (GET /api/_system/workflows) with a run form generated from each one's input schema
// (the `<name>.input` schema of /openapi.json); a started run opens on its page.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { JsonRecord, WorkflowSummary } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { loadOpenApi } from '../openApi.js';
import { SchemaForm, type JsonSchema } from '../schemaForm.js';
import { messageOf, type Session } from '../session.js';
import { DisabledWorkflows } from './WorkflowsDisabled.js';

function RunForm({ session, name, schema }: { session: Session; name: string; schema: JsonSchema }) {
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const start = async (input: JsonRecord) => {
    setBusy(true);
    setError(undefined);
    try {
      const run = await session.client.runs.start(name, input);
      navigate(`/runs/${run.id}`);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="run-form-title" className="panel">
      <h2 id="run-form-title" ref={heading} tabIndex={-1}>
        Run {name}
      </h2>
      <SchemaForm id={`run-${name}`} schema={schema} actions={[{ value: 'start', label: `Start ${name}` }]} busy={busy} onSubmit={start} onInvalid={setError} />
      <ErrorNote error={error} />
    </section>
  );
}

function WorkflowRow({ name, summary, description, onRun }: { name: string; summary: WorkflowSummary; description: string | undefined; onRun: () => void }) {
  return (
    <tr data-workflow={name}>
      <th scope="row">
        <Link to={`/workflows/${encodeURIComponent(name)}`}>{name}</Link>
      </th>
      <td>{description ?? ''}</td>
      <td>
        <code>
          {summary.trigger_method} {summary.trigger_path}
        </code>
        {summary.public ? <span className="badge ok">public</span> : null}
      </td>
      <td>
        <button type="button" className="secondary" onClick={onRun} aria-label={`Run ${name}`}>
          Run…
        </button>
      </td>
    </tr>
  );
}

export function WorkflowsPage({ session }: { session: Session }) {
  useTitle('Workflows');
  const [params, setParams] = useSearchParams();
  const workflows = useLoaded(() => session.client.listWorkflows(), [session]);
  const doc = useLoaded(loadOpenApi, []);
  const chosen = params.get('run');
  const describe = (summary: WorkflowSummary) => doc.value?.paths[summary.trigger_path]?.[summary.trigger_method.toLowerCase()]?.summary;
  const entries = Object.entries(workflows.value ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section aria-labelledby="workflows-title">
      <h1 id="workflows-title">Workflows</h1>
      <ErrorNote error={workflows.error ?? doc.error} />
      {chosen && doc.value && (
        <RunForm key={chosen} session={session} name={chosen} schema={doc.value.components.schemas[`${chosen}.input`] ?? { type: 'object' }} />
      )}
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">Enabled workflows</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">Trigger</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([name, summary]) => (
              <WorkflowRow key={name} name={name} summary={summary} description={describe(summary)} onRun={() => setParams({ run: name })} />
            ))}
          </tbody>
        </table>
      </div>
      <DisabledWorkflows session={session} serving={workflows.value && new Set(Object.keys(workflows.value))} />
    </section>
  );
}
