// The timeline: one row per step execution, its bar placed on the run's time axis, the context after
// the step in the row's details, an Agent step's LLM turns and tool calls as rows under it; below, the
// marks (decisions, retries, timers, children, control).
import { useEffect, useState } from 'react';
import { AgentRows, placement } from './AgentRows.js';
import type { StepBar, Timeline } from './timeline.js';
import { JsonView, formatDuration } from './ui.js';

/** Now, every half second while `ticking` (a running step's bar grows). */
function useNow(ticking: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!ticking) return;
    const timer = setInterval(() => setNow(Date.now()), 500);
    return () => clearInterval(timer);
  }, [ticking]);
  return now;
}

/** How many LLM turns and tool calls an Agent step made, as its row says. */
function activityWords(bar: StepBar): string {
  const turns = bar.activity.filter((row) => row.kind === 'turn').length;
  const calls = bar.activity.length - turns;
  if (bar.activity.length === 0) return '';
  return `, ${turns} LLM turn${turns === 1 ? '' : 's'}${calls > 0 ? `, ${calls} tool call${calls === 1 ? '' : 's'}` : ''}`;
}

function BarRow({ bar, start, span, now, isPaused }: { bar: StepBar; start: number; span: number; now: number; isPaused: boolean }) {
  const end = bar.endedAt ?? now;
  const state = bar.endedAt !== undefined ? (bar.failed ? 'failed' : 'done') : isPaused ? 'paused' : 'running';
  const words = `${bar.stepId} (${bar.kind}): ${state}, ${formatDuration(end - bar.startedAt)}${bar.signal ? `, signal ${bar.signal}` : ''}${bar.attempts ? `, ${bar.attempts} failed attempts` : ''}${activityWords(bar)}`;
  return (
    <li className={`step ${state}`} data-step={bar.stepId} data-state={state}>
      <details>
        <summary>
          <span className="step-name">{bar.stepId}</span>
          <span className="track" aria-hidden="true">
            <span className="bar" style={placement(bar.startedAt, end, start, span)} />
          </span>
          <span className="step-info">{words.slice(bar.stepId.length + 1)}</span>
        </summary>
        {bar.context ? <JsonView value={bar.context} label={`Context after ${bar.stepId}`} /> : <p className="muted">The step has not finished yet.</p>}
      </details>
      {bar.activity.length > 0 && <AgentRows stepId={bar.stepId} rows={bar.activity} start={start} span={span} now={now} />}
    </li>
  );
}

export function TimelineView({ timeline, live, isPaused }: { timeline: Timeline; live: boolean; isPaused: boolean }) {
  const running = timeline.endedAt === undefined && live;
  const now = useNow(running);
  const start = timeline.startedAt ?? now;
  // While the run goes on the axis ends now (never before the last event, whatever the browser's clock says).
  const end = timeline.endedAt ?? Math.max(now, timeline.lastEventAt ?? start);
  const span = Math.max(end - start, 1);
  return (
    <section aria-labelledby="timeline-title" className="timeline">
      <h2 id="timeline-title">
        Timeline{' '}
        <span className="muted" role="status">
          {running ? 'live' : timeline.endedAt !== undefined ? `ended after ${formatDuration(span)}` : 'stream closed'}
        </span>
      </h2>
      {timeline.bars.length === 0 ? (
        <p className="muted">No step has started yet.</p>
      ) : (
        <ol className="steps" aria-label="Steps in the order they ran">
          {timeline.bars.map((bar, index) => (
            <BarRow key={`${bar.stepId}-${index}`} bar={bar} start={start} span={span} now={now} isPaused={isPaused} />
          ))}
        </ol>
      )}
      {timeline.marks.length > 0 && (
        <>
          <h3>Events</h3>
          <ol className="marks">
            {timeline.marks.map((mark) => (
              <li key={mark.seq} data-type={mark.type}>
                <span className="muted">+{formatDuration(mark.at - start)}</span> {mark.label}
              </li>
            ))}
          </ol>
        </>
      )}
    </section>
  );
}
