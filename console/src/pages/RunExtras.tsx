// A run page's extras: steer (POST /api/runs/{id}/steer), fork from a step (POST /api/runs/{id}/fork),
// export (GET /api/runs/{id}/export, saved as a file), and the state of the hash chain
// (GET /admin/audit/verify, for audit:read; the export itself is checked offline by `svc runs verify`).
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { AuditVerification, JsonRecord, RunDescriptor } from '../../../src/client/index.js';
import { ErrorNote } from '../hooks.js';
import { abilities, hasScope, messageOf, type Session } from '../session.js';

const FINAL = new Set(['completed', 'failed', 'aborted']);

function Steer({ session, run }: { session: Session; run: RunDescriptor }) {
  const [message, setMessage] = useState('');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      await session.client.runs.steer(run.id, message);
      setNotice(`Steered: “${message}”`);
      setMessage('');
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Steer the run">
      <label htmlFor="steer-message">Steering message</label>
      <input id="steer-message" value={message} required onChange={(event) => setMessage(event.target.value)} />
      <button type="submit">Steer</button>
      <span role="status">{notice}</span>
      <ErrorNote error={error} />
    </form>
  );
}

function Fork({ session, run, stepIds }: { session: Session; run: RunDescriptor; stepIds: string[] }) {
  const navigate = useNavigate();
  const [step, setStep] = useState(stepIds[0] ?? '');
  const [input, setInput] = useState('');
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(undefined);
    try {
      const changes = input.trim() ? (JSON.parse(input) as JsonRecord) : undefined;
      const forked = await session.client.runs.fork(run.id, step || stepIds[0] || '', changes);
      navigate(`/runs/${forked.id}`);
    } catch (failure) {
      setError(failure instanceof SyntaxError ? `The input is not JSON: ${failure.message}` : messageOf(failure));
    }
  };
  if (stepIds.length === 0) return null;
  return (
    <form className="inline-form" onSubmit={submit} aria-label="Fork the run from a step">
      <label htmlFor="fork-step">Fork from step</label>
      <select id="fork-step" value={step} onChange={(event) => setStep(event.target.value)}>
        {stepIds.map((id) => (
          <option key={id}>{id}</option>
        ))}
      </select>
      <label htmlFor="fork-input">Input changes (JSON, optional)</label>
      <input id="fork-input" value={input} placeholder='{"key": "value"}' onChange={(event) => setInput(event.target.value)} />
      <button type="submit" className="secondary">
        Fork
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/** The export as a download: a Blob URL on a link clicked once (nothing inline, nothing off the origin). */
async function download(session: Session, id: string): Promise<void> {
  const document_ = await session.client.runs.export(id);
  const url = URL.createObjectURL(new Blob([JSON.stringify(document_, null, 2)], { type: 'application/json' }));
  const link = Object.assign(document.createElement('a'), { href: url, download: `run-${id}.json` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function chainSentence(result: AuditVerification, runId: string): string {
  const counted = `${result.events_checked} events, ${result.checkpoints_checked} signed checkpoint${result.checkpoints_checked === 1 ? '' : 's'}`;
  if (result.ok && result.checkpoints_checked === 0)
    return `Verified: every hash chain recomputes, this run's included (${result.events_checked} events); no signed checkpoint yet, so nothing signed vouches for them.`;
  if (result.ok) return `Verified: every hash chain recomputes, this run's included, and every checkpoint's signature holds (${counted}).`;
  const broken = result.first_broken;
  if (broken?.stream_id === `run-${runId}`) return `Broken in this run: position ${broken.stream_position}: ${broken.reason}.`;
  return `The log does not verify (${broken ? `${broken.stream_id} position ${broken.stream_position}: ${broken.reason}` : 'no detail'}); this run's stream is not the first break.`;
}

function HashChain({ session, runId }: { session: Session; runId: string }) {
  const [state, setState] = useState<{ ok: boolean; text: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  if (!hasScope(session.identity, 'audit:read'))
    return (
      <p className="muted" data-chain="unavailable">
        The hash chain's state needs the scope audit:read (GET /admin/audit/verify). The export carries each event's hash and a signature:{' '}
        <code>svc runs verify run.json --jwks jwks.json</code> checks it offline.
      </p>
    );
  const verify = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const result = await session.client.audit.verify();
      setState({ ok: result.ok, text: chainSentence(result, runId) });
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="chain">
      <button type="button" className="secondary" disabled={busy} onClick={() => void verify()}>
        Verify the hash chain
      </button>
      <p role="status" data-chain={state ? (state.ok ? 'ok' : 'broken') : 'unchecked'} className={state ? (state.ok ? 'ok-text' : 'bad-text') : 'muted'}>
        {state?.text ?? (busy ? 'Verifying…' : 'Not checked yet.')}
      </p>
      <ErrorNote error={error} />
    </div>
  );
}

export function RunExtras({ session, run, stepIds }: { session: Session; run: RunDescriptor; stepIds: string[] }) {
  const [error, setError] = useState<string | undefined>();
  const can = abilities(session.identity);
  return (
    <section aria-labelledby="run-extras-title" className="run-extras">
      <h2 id="run-extras-title">Steer, fork, export, verify</h2>
      {can.controlRuns && !FINAL.has(run.status) && <Steer session={session} run={run} />}
      {can.controlRuns && <Fork session={session} run={run} stepIds={stepIds} />}
      <p>
        <button type="button" className="secondary" onClick={() => download(session, run.id).catch((failure: unknown) => setError(messageOf(failure)))}>
          Export (signed JSON)
        </button>
      </p>
      <ErrorNote error={error} />
      <HashChain session={session} runId={run.id} />
    </section>
  );
}
