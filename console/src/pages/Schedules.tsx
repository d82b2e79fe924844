// Schedules (GET /admin/schedules, deployment admins): each with its next and last tick, pause or
// resume (PATCH /admin/schedules/{workflow}/{id}), and run now (POST .../run), which opens the run.
import './admin.css';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import type { Schedule } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { messageOf, type Session } from '../session.js';
import { formatTime, shortId } from '../ui.js';

const stateOf = (schedule: Schedule): string => (!schedule.enabled ? 'disabled' : schedule.paused ? 'paused' : 'active');

interface RowProps {
  schedule: Schedule;
  busy: boolean;
  onToggle: (schedule: Schedule) => void;
  onRun: (schedule: Schedule) => void;
}

function ScheduleRow({ schedule, busy, onToggle, onRun }: RowProps) {
  const name = `${schedule.workflow} ${schedule.id}`;
  return (
    <tr data-schedule={`${schedule.workflow}/${schedule.id}`}>
      <th scope="row">
        {schedule.workflow} <span className="muted">{schedule.id}</span>
      </th>
      <td>
        <code>{schedule.cron}</code> <span className="muted">{schedule.timezone}</span>
      </td>
      <td>
        <span className={`badge ${stateOf(schedule) === 'active' ? 'ok' : 'wait'}`}>{stateOf(schedule)}</span>
      </td>
      <td className="nowrap">{formatTime(schedule.next_fire_at) || '—'}</td>
      <td className="nowrap">
        {formatTime(schedule.last_fired_at) || '—'}{' '}
        {schedule.last_run_id && (
          <Link to={`/runs/${schedule.last_run_id}`} title={schedule.last_run_id}>
            <span className="visually-hidden">Last run of {name}: </span>
            <code>{shortId(schedule.last_run_id)}</code>
          </Link>
        )}
      </td>
      <td>
        <div className="actions">
          <button
            type="button"
            className="secondary"
            disabled={busy}
            aria-label={`${schedule.paused ? 'Resume' : 'Pause'} ${name}`}
            onClick={() => onToggle(schedule)}
          >
            {schedule.paused ? 'Resume' : 'Pause'}
          </button>
          <button type="button" disabled={busy} aria-label={`Run now: ${name}`} onClick={() => onRun(schedule)}>
            Run now
          </button>
        </div>
      </td>
    </tr>
  );
}

function ScheduleTable({ schedules, ...row }: { schedules: Schedule[] } & Omit<RowProps, 'schedule'>) {
  return (
    <div className="table-scroll">
      <table className="schedules">
        <caption className="visually-hidden">Schedules, their next and last ticks</caption>
        <thead>
          <tr>
            <th scope="col">Schedule</th>
            <th scope="col">When</th>
            <th scope="col">State</th>
            <th scope="col">Next tick</th>
            <th scope="col">Last tick</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((schedule) => (
            <ScheduleRow key={`${schedule.workflow}/${schedule.id}`} schedule={schedule} {...row} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function SchedulesPage({ session }: { session: Session }) {
  useTitle('Schedules');
  const navigate = useNavigate();
  const schedules = useLoaded(() => session.client.schedules.list(), [session]);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const act = async (call: () => Promise<string | undefined>) => {
    setBusy(true);
    setError(undefined);
    try {
      const message = await call();
      if (message) setNotice(message);
      schedules.reload();
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  const admin = session.client.schedules;
  const toggle = (s: Schedule) =>
    act(async () => {
      await (s.paused ? admin.resume(s.workflow, s.id) : admin.pause(s.workflow, s.id));
      return `${s.workflow} ${s.id}: ${s.paused ? 'resumed' : 'paused'}.`;
    });
  const runNow = (s: Schedule) =>
    act(async () => {
      const run = await admin.run(s.workflow, s.id);
      navigate(`/runs/${run.id}`);
      return undefined;
    });
  return (
    <section aria-labelledby="schedules-title">
      <h1 id="schedules-title">Schedules</h1>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote error={schedules.error ?? error} />
      {!schedules.value && !schedules.error && <p className="loading">Loading…</p>}
      {schedules.value?.length === 0 && <p>No workflow has a schedule.</p>}
      {schedules.value && schedules.value.length > 0 && <ScheduleTable schedules={schedules.value} busy={busy} onToggle={toggle} onRun={runNow} />}
    </section>
  );
}
