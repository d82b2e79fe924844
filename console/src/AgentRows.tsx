// An Agent step's LLM turns and tool calls as sub-rows under its bar, on the run's time axis; each row
// opens on its detail (the answer, or the call's arguments and result). The text says all the bar shows.
import type { AgentRow, LlmTurnRow, ToolCallRow } from './agentActivity.js';
import { JsonView, formatDuration } from './ui.js';

/** Where a span sits on the axis, in percent; a span of a few milliseconds still shows as a sliver. */
export function placement(from: number, to: number, start: number, span: number): { left: string; width: string } {
  const left = Math.min(((from - start) / span) * 100, 99.2);
  const width = Math.max(((to - from) / span) * 100, 0.8);
  return { left: `${left}%`, width: `${Math.min(width, 100 - left)}%` };
}

const EXCERPT = 80;
const excerpt = (text: string): string => (text.length > EXCERPT ? `${text.slice(0, EXCERPT - 1)}…` : text);

function turnWords(turn: LlmTurnRow): string {
  const said = turn.asksFor.length > 0 ? `asks for ${turn.asksFor.join(', ')}` : turn.answer ? `answers “${excerpt(turn.answer)}”` : 'answers nothing';
  const tokens = turn.tokensUsed !== undefined ? `, ${turn.tokensUsed} tokens so far` : '';
  return `${turn.model || 'model'}, ${formatDuration(turn.endedAt - turn.startedAt)}: ${said}${tokens}`;
}

function toolWords(call: ToolCallRow, now: number): string {
  const state = call.endedAt === undefined ? 'running' : call.signal ? `signal ${call.signal}` : 'answered';
  return `tool call: ${state}, ${formatDuration((call.endedAt ?? now) - call.startedAt)}`;
}

function TurnDetail({ turn, label }: { turn: LlmTurnRow; label: string }) {
  return (
    <div className="agent-detail">
      {turn.steers.length > 0 && (
        <>
          <h4>Steers given before this answer</h4>
          <ul>
            {turn.steers.map((steer, index) => (
              <li key={index}>{steer}</li>
            ))}
          </ul>
        </>
      )}
      <h4>Answer</h4>
      {turn.answer ? (
        <pre className="json" aria-label={`Answer of ${label}`} tabIndex={0}>
          {turn.answer}
        </pre>
      ) : (
        <p className="muted">No text{turn.asksFor.length > 0 ? `: tool calls ${turn.asksFor.join(', ')}` : ''}.</p>
      )}
    </div>
  );
}

function ToolDetail({ call }: { call: ToolCallRow }) {
  return (
    <div className="agent-detail">
      <h4>Arguments</h4>
      <JsonView value={call.args ?? null} label={`Arguments of ${call.tool}`} />
      <h4>Result</h4>
      {call.endedAt === undefined ? <p className="muted">No result yet.</p> : <JsonView value={call.result ?? null} label={`Result of ${call.tool}`} />}
    </div>
  );
}

function Row({ row, start, span, now }: { row: AgentRow; start: number; span: number; now: number }) {
  const name = row.kind === 'turn' ? `LLM turn ${row.iteration}` : row.tool;
  const end = row.endedAt ?? now;
  const state = row.endedAt === undefined ? 'running' : row.kind === 'tool' && row.signal === 'error' ? 'failed' : 'done';
  return (
    <li className={`agent-row ${row.kind} ${state}`} data-kind={row.kind} data-name={name} data-state={state}>
      <details>
        <summary>
          <span className="step-name">{name}</span>
          <span className="track" aria-hidden="true">
            <span className="bar" style={placement(row.startedAt, end, start, span)} />
          </span>
          <span className="step-info">{row.kind === 'turn' ? turnWords(row) : toolWords(row, now)}</span>
        </summary>
        {row.kind === 'turn' ? <TurnDetail turn={row} label={name} /> : <ToolDetail call={row} />}
      </details>
    </li>
  );
}

export function AgentRows({ stepId, rows, start, span, now }: { stepId: string; rows: AgentRow[]; start: number; span: number; now: number }) {
  return (
    <ol className="agent-rows" aria-label={`LLM turns and tool calls of ${stepId}`}>
      {rows.map((row) => (
        <Row key={row.seq} row={row} start={start} span={span} now={now} />
      ))}
    </ol>
  );
}
