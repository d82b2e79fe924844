// One run: its state, the controls the scopes allow (pause, resume, abort), and the live timeline from
// its SSE journal (GET /api/runs/{id}/events: replayed, then live until the run ends).
import { useEffect, useState } from 'react';
import { Link, useParams } from 'react-router';
import type { RunDescriptor, RunEvent } from '../../../src/client/index.js';
import { ErrorNote, useTitle } from '../hooks.js';
import { abilities, messageOf, type Session } from '../session.js';
import { TimelineView } from '../Timeline.js';
import { buildTimeline } from '../timeline.js';
import { JsonView, StatusBadge, formatTime } from '../ui.js';
import { RunExtras } from './RunExtras.js';
import '../extras.css';

const FINAL = new Set(['completed', 'failed', 'aborted']);

/** `action` at most once per `ms`: run `ms` after the first call of a burst, never once `signal` aborts. */
function throttled(action: () => void, ms: number, signal: AbortSignal): () => void {
  let isScheduled = false;
  return () => {
    if (isScheduled) return;
    isScheduled = true;
    setTimeout(() => {
      isScheduled = false;
      if (!signal.aborted) action();
    }, ms);
  };
}

/** The journal as it grows, and the run descriptor read again after events (a long journal replays in a burst: at most every 250 ms). */
function useLiveRun(session: Session, id: string) {
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [run, setRun] = useState<RunDescriptor | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [live, setLive] = useState(true);
  useEffect(() => {
    const stop = new AbortController();
    setEvents([]);
    setLive(true);
    let requests = 0;
    // Answers can overtake each other: only the latest request's answer is shown.
    const refresh = async () => {
      const asked = ++requests;
      try {
        const fresh = await session.client.runs.get(id);
        if (!stop.signal.aborted && asked === requests) setRun(fresh);
      } catch (failure) {
        setError(messageOf(failure));
      }
    };
    const refreshSoon = throttled(() => void refresh(), 250, stop.signal);
    void refresh();
    (async () => {
      for await (const event of session.client.runs.events(id, { signal: stop.signal })) {
        setEvents((known) => [...known, event]);
        refreshSoon();
      }
    })()
      .catch((failure: unknown) => !stop.signal.aborted && setError(messageOf(failure)))
      .finally(() => {
        if (stop.signal.aborted) return;
        setLive(false);
        // The stream ended with the run: its final state.
        void refresh();
      });
    return () => stop.abort();
  }, [session, id]);
  const setFresh = (fresh: RunDescriptor) => setRun(fresh);
  return { events, run, error, live, setFresh, setError };
}

function Controls({
  session,
  run,
  onChange,
  onError,
}: {
  session: Session;
  run: RunDescriptor;
  onChange: (run: RunDescriptor) => void;
  onError: (message: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  if (!abilities(session.identity).controlRuns || FINAL.has(run.status)) return null;
  const act = async (action: () => Promise<RunDescriptor>) => {
    setBusy(true);
    try {
      onChange(await action());
    } catch (failure) {
      onError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const isPaused = run.status === 'paused' || run.pause_requested;
  return (
    <div className="controls" role="group" aria-label="Run controls">
      {isPaused ? (
        <button type="button" disabled={busy} onClick={() => act(() => session.client.runs.resume(run.id))}>
          Resume
        </button>
      ) : (
        <button type="button" disabled={busy} onClick={() => act(() => session.client.runs.pause(run.id))}>
          Pause
        </button>
      )}
      <button type="button" className="danger" disabled={busy} onClick={() => act(() => session.client.runs.abort(run.id, 'aborted from the console'))}>
        Abort
      </button>
    </div>
  );
}

function Summary({ run }: { run: RunDescriptor }) {
  return (
    <dl className="summary">
      <dt>Status</dt>
      <dd>
        <StatusBadge status={run.status} />
        {run.pause_requested && run.status !== 'paused' ? ' (pause requested)' : ''}
      </dd>
      <dt>Workflow</dt>
      <dd>
        {run.workflow} <span className="muted">{run.schema_version}</span>
      </dd>
      <dt>Current step</dt>
      <dd>{run.current_step ?? '—'}</dd>
      <dt>Created</dt>
      <dd>{formatTime(run.created_at)}</dd>
      {run.wake_at && (
        <>
          <dt>Wakes at</dt>
          <dd>{formatTime(run.wake_at)}</dd>
        </>
      )}
      {run.parent_run_id && (
        <>
          <dt>Parent run</dt>
          <dd>
            <Link to={`/runs/${run.parent_run_id}`}>{run.parent_run_id}</Link>
          </dd>
        </>
      )}
    </dl>
  );
}

export function RunPage({ session }: { session: Session }) {
  const id = useParams().id ?? '';
  useTitle(`Run ${id.slice(0, 8)}`);
  const { events, run, error, live, setFresh, setError } = useLiveRun(session, id);
  const timeline = buildTimeline(events);
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">
        Run <code>{id}</code>
      </h1>
      <ErrorNote error={error} />
      {run && (
        <div className="run-head">
          <Summary run={run} />
          <Controls session={session} run={run} onChange={setFresh} onError={setError} />
        </div>
      )}
      <TimelineView timeline={timeline} live={live} isPaused={run?.status === 'paused'} />
      {run?.children && run.children.length > 0 && <Children run={run} />}
      {run && <RunExtras session={session} run={run} stepIds={[...new Set(timeline.bars.map((bar) => bar.stepId))]} />}
      <h2>Input</h2>
      <JsonView value={run?.input} label="Run input" />
      {run && FINAL.has(run.status) && (
        <>
          <h2>{run.status === 'completed' ? 'Output' : 'Error'}</h2>
          <JsonView value={run.status === 'completed' ? run.output : run.error} label="Run outcome" />
        </>
      )}
    </section>
  );
}

function Children({ run }: { run: RunDescriptor }) {
  return (
    <>
      <h2>Child runs</h2>
      <ul>
        {(run.children ?? []).map((child) => (
          <li key={child.run_id}>
            <Link to={`/runs/${child.run_id}`}>{child.workflow}</Link> <StatusBadge status={child.status} />
          </li>
        ))}
      </ul>
    </>
  );
}
