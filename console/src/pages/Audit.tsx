// The audit log (audit:read): GET /admin/events with filters and cursor pages, a live tail of
// /admin/events/stream (the newest events first), and GET /admin/audit/verify's answer.
import './admin.css';
import { useEffect, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import type { AuditVerification, LogEvent, LogQuery } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { messageOf, type Session } from '../session.js';
import { JsonView, formatTime, shortId } from '../ui.js';

const PAGE_SIZE = 50;
const TAIL_KEEP = 50;
const TAIL_LOOKBACK_MS = 15 * 60_000;
const FILTERS: [name: string, label: string, type: string][] = [
  ['type', 'Event type', 'text'],
  ['stream_type', 'Stream type', 'text'],
  ['stream_id', 'Stream id', 'text'],
  ['actor', 'Actor id', 'text'],
  ['since', 'Since', 'datetime-local'],
  ['until', 'Until', 'datetime-local'],
];

const instant = (local: string | null): string | undefined => (local ? new Date(local).toISOString() : undefined);

function queryOf(params: URLSearchParams): LogQuery {
  const text = (name: string) => params.get(name) || undefined;
  return {
    type: text('type')
      ?.split(',')
      .map((type) => type.trim()),
    streamType: text('stream_type'),
    streamId: text('stream_id'),
    actor: text('actor'),
    since: instant(params.get('since')),
    until: instant(params.get('until')),
    after: text('after'),
    limit: Number(params.get('limit')) || PAGE_SIZE,
  };
}

function Filters({ params, onSearch }: { params: URLSearchParams; onSearch: (next: URLSearchParams) => void }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    if (params.get('limit')) next.set('limit', params.get('limit') ?? '');
    for (const [name] of FILTERS) if (form.get(name)) next.set(name, String(form.get(name)));
    onSearch(next);
  };
  return (
    <form className="filters" onSubmit={submit} aria-label="Filter the audit log">
      {FILTERS.map(([name, label, type]) => (
        <label key={name}>
          {label}
          <input name={name} type={type} defaultValue={params.get(name) ?? ''} />
        </label>
      ))}
      <button type="submit">Filter</button>
    </form>
  );
}

export function EventTable({ events, caption }: { events: LogEvent[]; caption: string }) {
  return (
    <div className="table-scroll">
      <table className="events">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Recorded</th>
            <th scope="col">Type</th>
            <th scope="col">Stream</th>
            <th scope="col">Actor</th>
            <th scope="col">Data</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.cursor} data-type={event.type}>
              <td>{event.global_position}</td>
              <td className="nowrap">{formatTime(event.recorded_at)}</td>
              <td>
                <code>{event.type}</code>
              </td>
              <td>
                {event.stream_type} <code className="muted">{event.stream_id}</code>
              </td>
              <td className="nowrap" title={event.metadata.actor?.id}>
                {event.metadata.actor ? `${event.metadata.actor.type} ${shortId(event.metadata.actor.id)}` : ''}
              </td>
              <td>
                <details>
                  <summary>data</summary>
                  <JsonView value={event.data} label={`Data of event ${event.global_position}`} />
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function LiveTail({ session, query }: { session: Session; query: LogQuery }) {
  const [events, setEvents] = useState<LogEvent[]>([]);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const stop = new AbortController();
    const follow = async () => {
      // Without a Since filter the tail starts a little back, not at the log's first event.
      const since = query.since ?? new Date(Date.now() - TAIL_LOOKBACK_MS).toISOString();
      for await (const event of session.client.audit.stream({ ...query, since, after: undefined }, { signal: stop.signal }))
        setEvents((shown) => [event, ...shown].slice(0, TAIL_KEEP));
    };
    follow().catch((failure: unknown) => stop.signal.aborted || setError(messageOf(failure)));
    return () => stop.abort();
  }, [session, JSON.stringify(query)]);
  return (
    <section className="panel" aria-labelledby="tail-title">
      <h2 id="tail-title">Live tail</h2>
      <p role="status" className="muted">
        {error ? 'stopped' : `following: ${events.length} recent events, newest first`}
      </p>
      <ErrorNote error={error} />
      <EventTable events={events} caption="The newest events, live" />
    </section>
  );
}

function Verify({ session }: { session: Session }) {
  const [report, setReport] = useState<AuditVerification | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const verify = () => {
    setBusy(true);
    setError(undefined);
    session.client.audit
      .verify()
      .then(setReport, (failure: unknown) => setError(messageOf(failure)))
      .finally(() => setBusy(false));
  };
  return (
    <div className="actions verify">
      <button type="button" onClick={verify} disabled={busy}>
        {busy ? 'Verifying…' : 'Verify the hash chains'}
      </button>
      <p role="status" className={report && !report.ok ? 'error' : 'notice'} data-verified={report ? String(report.ok) : undefined}>
        {report &&
          (report.ok
            ? `Intact: ${report.events_checked} events and ${report.checkpoints_checked} checkpoints checked.`
            : `Broken: ${JSON.stringify(report.first_broken)} (${report.events_checked} events checked).`)}
      </p>
      <ErrorNote error={error} />
    </div>
  );
}

export function AuditPage({ session }: { session: Session }) {
  useTitle('Audit log');
  const [params, setParams] = useSearchParams();
  const [formKey, setFormKey] = useState(0);
  const [tail, setTail] = useState(false);
  const query = queryOf(params);
  const page = useLoaded(() => session.client.audit.events(query), [params.toString()]);
  const pageAfter = (after: string | null) => {
    const next = new URLSearchParams(params);
    if (after) next.set('after', after);
    else next.delete('after');
    setParams(next);
  };
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit log</h1>
      <Verify session={session} />
      <Filters
        key={formKey}
        params={params}
        onSearch={(next) => {
          setParams(next);
          setFormKey((n) => n + 1);
        }}
      />
      <label className="inline">
        <input type="checkbox" checked={tail} onChange={(event) => setTail(event.currentTarget.checked)} /> Live tail
      </label>
      {tail && <LiveTail session={session} query={query} />}
      <h2>Events, oldest first</h2>
      <ErrorNote error={page.error} />
      {page.value ? <EventTable events={page.value.events} caption="Events of the log, oldest first" /> : !page.error && <p className="loading">Loading…</p>}
      {page.value?.events.length === 0 && <p>No event matches.</p>}
      <div className="pager">
        {params.get('after') && (
          <button type="button" className="secondary" onClick={() => pageAfter(null)}>
            First page
          </button>
        )}
        {page.value?.next_cursor && (
          <button type="button" onClick={() => pageAfter(page.value?.next_cursor ?? null)}>
            Next page
          </button>
        )}
      </div>
    </section>
  );
}
