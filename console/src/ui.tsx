// Small presentational pieces shared by the pages.
import type { Json } from '../../src/client/index.js';

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The status as text with a colour class; the text alone carries the meaning. */
export function StatusBadge({ status }: { status: string }) {
  const tone = status === 'completed' ? 'ok' : status === 'failed' || status === 'aborted' ? 'bad' : status === 'running' ? 'busy' : 'wait';
  return <span className={`badge ${tone}`}>{status}</span>;
}

export function JsonView({ value, label }: { value: Json | undefined; label: string }) {
  return (
    <pre className="json" aria-label={label} tabIndex={0}>
      {JSON.stringify(value ?? null, null, 2)}
    </pre>
  );
}

/** A run id as tables show it: its last characters (UUIDv7 ids share their leading, time-based ones). */
export const shortId = (id: string): string => id.slice(-8);
