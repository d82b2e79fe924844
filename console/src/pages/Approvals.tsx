// The approvals inbox (GET /api/approvals: what the caller may decide): each approval's context and
// its form, generated from the form's JSON Schema, with approve and reject (POST /api/approvals/{id}).
import { useState } from 'react';
import { Link } from 'react-router';
import type { Approval, Json, JsonRecord } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { SchemaForm, formSchema } from '../schemaForm.js';
import { messageOf, type Session } from '../session.js';
import { JsonView, formatTime, shortId } from '../ui.js';

const DECISIONS = [
  { value: 'approve', label: 'Approve' },
  { value: 'reject', label: 'Reject', className: 'danger', skipsChecks: true },
];

function ApprovalCard({ session, approval, onDecided }: { session: Session; approval: Approval; onDecided: (message: string) => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const decide = async (values: JsonRecord, decision: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await session.client.approvals.decide(approval.approval_id, { decision: decision as 'approve' | 'reject', values });
      onDecided(`${approval.title}: ${decision === 'approve' ? 'approved' : 'rejected'}.`);
    } catch (failure) {
      setError(messageOf(failure));
      setBusy(false);
    }
  };
  const titleId = `approval-${approval.approval_id}`;
  return (
    <article className="panel approval" aria-labelledby={titleId} data-approval-id={approval.approval_id}>
      <h2 id={titleId}>{approval.title}</h2>
      <p className="muted">
        {approval.workflow} · step {approval.step_id} · run <Link to={`/runs/${approval.run_id}`}>{shortId(approval.run_id)}</Link> · asked{' '}
        {formatTime(approval.created_at)}
        {approval.required_group ? ` · group ${approval.required_group}` : ''}
        {approval.expires_at ? ` · expires ${formatTime(approval.expires_at)}` : ''}
      </p>
      {approval.instruction && <p>{approval.instruction}</p>}
      {Object.keys(approval.display).length > 0 && <JsonView value={approval.display as Json} label={`Context of ${approval.title}`} />}
      <SchemaForm
        id={`form-${approval.approval_id}`}
        schema={formSchema(approval.form)}
        actions={DECISIONS}
        busy={busy}
        onSubmit={decide}
        onInvalid={setError}
      />
      <ErrorNote error={error} />
    </article>
  );
}

export function ApprovalsPage({ session }: { session: Session }) {
  useTitle('Approvals');
  const approvals = useLoaded(() => session.client.approvals.list(), [session]);
  const [notice, setNotice] = useState<string | undefined>();
  const decided = (message: string) => {
    setNotice(message);
    approvals.reload();
  };
  return (
    <section aria-labelledby="approvals-title">
      <h1 id="approvals-title">Approvals</h1>
      <p role="status" className="notice">
        {notice ?? ''}
      </p>
      <ErrorNote error={approvals.error} />
      {approvals.value?.length === 0 && <p>Nothing waits for your decision.</p>}
      {approvals.value?.map((approval) => (
        <ApprovalCard key={approval.approval_id} session={session} approval={approval} onDecided={decided} />
      ))}
      <button type="button" className="secondary" onClick={approvals.reload}>
        Refresh
      </button>
    </section>
  );
}
