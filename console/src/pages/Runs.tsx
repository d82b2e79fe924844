// Runs search: status, workflow and time range filters (GET /api/runs), cursor pages (X-Next-Cursor).
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { RUN_STATUSES, type RunDescriptor, type RunSearch, type RunStatus } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import type { Session } from '../session.js';
import { StatusBadge, formatTime, shortId } from '../ui.js';

const PAGE_SIZE = 25;

/** A datetime-local value as an ISO instant (the browser's time zone), or undefined when empty. */
const instant = (local: string | null): string | undefined => (local ? new Date(local).toISOString() : undefined);

function searchOf(params: URLSearchParams): RunSearch {
  return {
    workflow: params.get('workflow') || undefined,
    status: (params.get('status') || undefined) as RunStatus | undefined,
    createdAfter: instant(params.get('after')),
    createdBefore: instant(params.get('before')),
    cursor: params.get('cursor') || undefined,
    limit: Number(params.get('limit')) || PAGE_SIZE,
  };
}

function SearchForm({ params, onSearch, workflows }: { params: URLSearchParams; onSearch: (next: URLSearchParams) => void; workflows: string[] }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    if (params.get('limit')) next.set('limit', params.get('limit') ?? '');
    for (const name of ['status', 'workflow', 'after', 'before']) {
      const value = String(form.get(name) ?? '');
      if (value) next.set(name, value);
    }
    onSearch(next);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Search runs">
      <label>
        Status
        <select name="status" defaultValue={params.get('status') ?? ''}>
          <option value="">any</option>
          {RUN_STATUSES.map((status) => (
            <option key={status}>{status}</option>
          ))}
        </select>
      </label>
      <label>
        Workflow
        <select name="workflow" defaultValue={params.get('workflow') ?? ''}>
          <option value="">any</option>
          {workflows.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      <label>
        Created after
        <input type="datetime-local" name="after" defaultValue={params.get('after') ?? ''} />
      </label>
      <label>
        Created before
        <input type="datetime-local" name="before" defaultValue={params.get('before') ?? ''} />
      </label>
      <button type="submit">Search</button>
    </form>
  );
}

export function RunsPage({ session }: { session: Session }) {
  useTitle('Runs');
  const [params, setParams] = useSearchParams();
  const [formKey, setFormKey] = useState(0);
  const page = useLoaded(() => session.client.runs.page(searchOf(params)), [params.toString()]);
  const workflows = useLoaded(() => session.client.listWorkflows(), []);
  const search = (next: URLSearchParams) => {
    setParams(next);
    setFormKey((n) => n + 1);
  };
  const nextPage = () => {
    const next = new URLSearchParams(params);
    next.set('cursor', page.value?.nextCursor ?? '');
    setParams(next);
  };
  const firstPage = () => {
    const next = new URLSearchParams(params);
    next.delete('cursor');
    setParams(next);
  };
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <SearchForm key={formKey} params={params} onSearch={search} workflows={Object.keys(workflows.value ?? {}).sort()} />
      <ErrorNote error={page.error} />
      <RunTable runs={page.value?.runs} />
      <div className="pager">
        {params.get('cursor') && (
          <button type="button" className="secondary" onClick={firstPage}>
            First page
          </button>
        )}
        <button type="button" className="secondary" onClick={page.reload}>
          Refresh
        </button>
        {page.value?.nextCursor && (
          <button type="button" onClick={nextPage}>
            Next page
          </button>
        )}
      </div>
    </section>
  );
}

function RunTable({ runs }: { runs: RunDescriptor[] | undefined }) {
  if (!runs) return <p className="loading">Loading…</p>;
  if (runs.length === 0) return <p>No run matches.</p>;
  return (
    <div className="table-scroll">
      <table className="runs">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Step</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.id} data-run-id={run.id}>
              <td>
                <Link to={`/runs/${run.id}`} title={run.id}>
                  <span className="visually-hidden">Run </span>
                  <code>{shortId(run.id)}</code>
                </Link>
              </td>
              <td>{run.workflow}</td>
              <td>
                <StatusBadge status={run.status} />
              </td>
              <td>{run.current_step ?? ''}</td>
              <td className="nowrap">{formatTime(run.created_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
