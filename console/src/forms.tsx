// What the write forms share: the API's refusal turned into field messages and an announced summary,
// focus on the first field in error, focus back where a form was opened from, and a delete confirmed inline.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { messageOf } from './session.js';

/** Messages by field name, and every message (for the announced summary). */
export interface FormProblems {
  fields: Record<string, string>;
  summary: string[];
}

export const NO_PROBLEMS: FormProblems = { fields: {}, summary: [] };

interface Issue {
  loc?: (string | number)[];
  msg?: string;
}

/**
 * A refused call as form problems: a 422's issues by their `loc` (`['body', field, ...]`), and a
 * sentence that starts with a field's name (`password must have at least ...`) under that field.
 */
export function problemsOf(error: unknown, fieldNames: readonly string[]): FormProblems {
  const detail = ((error as { body?: unknown }).body as { detail?: unknown } | undefined)?.detail;
  const fields: Record<string, string> = {};
  const named = new Set(fieldNames);
  if (Array.isArray(detail)) {
    const summary = (detail as Issue[]).map((issue) => {
      const [, field] = issue.loc ?? [];
      const message = issue.msg ?? 'invalid';
      if (typeof field === 'string' && named.has(field)) {
        fields[field] ??= message;
        return `${field}: ${message}`;
      }
      return [issue.loc?.slice(1).join('.'), message].filter(Boolean).join(': ');
    });
    return { fields, summary };
  }
  const message = messageOf(error);
  const field = fieldNames.find((name) => message.startsWith(`${name} `) || message.startsWith(`${name}:`));
  if (field) fields[field] = message;
  return { fields, summary: [message] };
}

/** The id of a field's message, for `aria-describedby`. */
export const problemId = (formId: string, field: string): string => `${formId}-${field}-problem`;

/** Attributes of a control whose field may be in error. */
export function invalidProps(formId: string, field: string, problems: FormProblems) {
  return problems.fields[field] ? { 'aria-invalid': true as const, 'aria-describedby': problemId(formId, field) } : {};
}

export function FieldProblem({ formId, field, problems }: { formId: string; field: string; problems: FormProblems }) {
  const message = problems.fields[field];
  if (!message) return null;
  return (
    <p id={problemId(formId, field)} className="field-problem">
      {message}
    </p>
  );
}

/** The summary, announced (role="alert"); focus goes to the first field in error, else to it. */
export function FormAlert({ formId, problems }: { formId: string; problems: FormProblems }) {
  const alert = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (problems.summary.length === 0) return;
    const invalid = document.getElementById(formId)?.querySelector<HTMLElement>('[aria-invalid="true"]');
    (invalid ?? alert.current)?.focus();
  }, [problems, formId]);
  if (problems.summary.length === 0) return null;
  return (
    <div role="alert" className="error" ref={alert} tabIndex={-1}>
      {problems.summary.length === 1 ? (
        problems.summary[0]
      ) : (
        <ul>
          {problems.summary.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * A form panel that opens with focus on its heading and, once closed, gives focus back to the
 * control that opened it (or to `fallback` when that control is gone, a deleted row's).
 */
export function usePanel<T>(fallback: () => HTMLElement | null) {
  const [open, setOpen] = useState<T | undefined>();
  const opener = useRef<HTMLElement | null>(null);
  const isClosing = useRef(false);
  useEffect(() => {
    if (open !== undefined || !isClosing.current) return;
    isClosing.current = false;
    const target = opener.current?.isConnected ? opener.current : fallback();
    target?.focus();
  }, [open]);
  return {
    open,
    show(what: T) {
      opener.current = document.activeElement as HTMLElement | null;
      setOpen(what);
    },
    close() {
      isClosing.current = true;
      setOpen(undefined);
    },
  };
}

/** A heading that takes focus when its panel opens. */
export function PanelHeading({ id, children }: { id: string; children: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <h2 id={id} ref={heading} tabIndex={-1}>
      {children}
    </h2>
  );
}

/** A delete in two steps in place: the button, then "Confirm" (focused) and "Cancel" (focus back to the button). */
export function ConfirmButton({ label, what, onConfirm, busy }: { label: string; what: string; onConfirm: () => void; busy: boolean }) {
  const [isAsking, setAsking] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const wasAsking = useRef(false);
  useEffect(() => {
    if (isAsking) confirm.current?.focus();
    else if (wasAsking.current) first.current?.focus();
    wasAsking.current = isAsking;
  }, [isAsking]);
  if (!isAsking)
    return (
      <button type="button" className="secondary" ref={first} aria-label={`${label} ${what}`} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span className="confirm" role="group" aria-label={`${label} ${what}?`}>
      <button type="button" className="danger" ref={confirm} disabled={busy} aria-label={`Confirm: ${label.toLowerCase()} ${what}`} onClick={onConfirm}>
        Confirm
      </button>
      <button type="button" className="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
