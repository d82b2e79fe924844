// A form generated from a JSON Schema object (a workflow's input schema, a model's record schema, as
// /openapi.json publishes them): one labelled control per property, typed values out, the API's
// messages under their fields.
import type { FormEvent } from 'react';
import type { Json, JsonRecord } from '../../src/client/index.js';
import { FieldProblem, invalidProps, NO_PROBLEMS, type FormProblems } from './forms.js';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: Json[];
  format?: string;
  description?: string;
  maxLength?: number;
}

/** A human step's form as the API lists it: its `human_feedback` fields. */
interface FeedbackField {
  name: string;
  type?: string;
  required?: boolean;
  options?: string[];
}
const FIELD_TYPES: Record<string, string> = {
  float: 'number',
  number: 'number',
  integer: 'integer',
  int: 'integer',
  boolean: 'boolean',
  bool: 'boolean',
  json: 'any',
  array: 'array',
  object: 'object',
};

/** A form as a JSON Schema: a field list (an approval's form) is turned into one; a schema stays as it is. */
export function formSchema(form: Json): JsonSchema {
  if (!Array.isArray(form)) return (form ?? { type: 'object' }) as JsonSchema;
  const fields = form as unknown as FeedbackField[];
  const properties = Object.fromEntries(
    fields.map((field): [string, JsonSchema] => [
      field.name,
      field.options
        ? { type: 'string', enum: field.options }
        : { type: FIELD_TYPES[field.type ?? 'string'] ?? 'string', ...(field.type === 'text' ? { maxLength: 10_000 } : {}) },
    ]),
  );
  return { type: 'object', properties, required: fields.filter((field) => field.required === true).map((field) => field.name) };
}

const typeOf = (schema: JsonSchema): string => (Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? 'any') : (schema.type ?? 'any'));
const isJsonTyped = (type: string) => type === 'array' || type === 'object' || type === 'any';

interface FieldProps {
  prefix: string;
  name: string;
  schema: JsonSchema;
  isRequired: boolean;
  initial: Json | undefined;
  problems: FormProblems;
}

/** A value as its control shows it: JSON for JSON-typed fields, text otherwise. */
const shownValue = (value: Json | undefined, type: string): string =>
  value === undefined || value === null ? '' : isJsonTyped(type) && typeof value === 'object' ? JSON.stringify(value) : String(value);

function Field({ prefix, name, schema, isRequired, initial, problems }: FieldProps) {
  const id = `${prefix}-${name}`;
  const type = typeOf(schema);
  const shared = { id, name, ...invalidProps(prefix, name, problems) };
  const problem = <FieldProblem formId={prefix} field={name} problems={problems} />;
  const label = (
    <label htmlFor={id}>
      {name}
      {isRequired ? <span className="required"> (required)</span> : null}
      {isJsonTyped(type) ? <span className="muted"> JSON {type === 'any' ? 'value' : type}</span> : null}
    </label>
  );
  if (type === 'boolean')
    return (
      <div className="field checkbox">
        <input {...shared} type="checkbox" defaultChecked={initial === true} />
        {label}
        {problem}
      </div>
    );
  let control;
  const defaultValue = shownValue(initial, type);
  if (schema.enum)
    control = (
      <select {...shared} required={isRequired} defaultValue={defaultValue}>
        <option value="">—</option>
        {schema.enum
          .filter((value) => value !== null)
          .map((value) => (
            <option key={String(value)}>{String(value)}</option>
          ))}
      </select>
    );
  else if (isJsonTyped(type) || (schema.maxLength ?? 0) > 200) control = <textarea {...shared} required={isRequired} rows={3} defaultValue={defaultValue} />;
  else if (type === 'number' || type === 'integer')
    control = <input {...shared} type="number" step={type === 'integer' ? 1 : 'any'} required={isRequired} defaultValue={defaultValue} />;
  else control = <input {...shared} required={isRequired} defaultValue={defaultValue} />;
  return (
    <div className="field">
      {label}
      {control}
      {problem}
    </div>
  );
}

/** The typed input from the form's values; throws on a JSON field that does not parse. */
export function valuesOf(schema: JsonSchema, form: FormData): JsonRecord {
  const input: JsonRecord = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const type = typeOf(property);
    const raw = form.get(name);
    if (type === 'boolean') {
      input[name] = raw === 'on';
      continue;
    }
    const text = typeof raw === 'string' ? raw : '';
    if (text === '') continue;
    if (type === 'number' || type === 'integer') input[name] = Number(text);
    else if (isJsonTyped(type) && !(schema.properties?.[name]?.enum ?? false)) {
      try {
        input[name] = JSON.parse(text) as Json;
      } catch {
        throw new Error(`${name}: not valid JSON`);
      }
    } else input[name] = text;
  }
  return input;
}

/** A submit button: its `value` reaches onSubmit; `skipsChecks` submits without the browser's required checks. */
export interface FormAction {
  value: string;
  label: string;
  className?: string;
  skipsChecks?: boolean;
}

interface SchemaFormProps {
  id: string;
  schema: JsonSchema;
  actions: FormAction[];
  busy: boolean;
  onSubmit: (values: JsonRecord, action: string) => void;
  onInvalid: (message: string) => void;
  /** The values the controls start with (a record being edited). */
  initial?: JsonRecord;
  /** The API's messages, shown under their fields. */
  problems?: FormProblems;
  /** Said when the schema has no field. */
  emptyText?: string;
  /** A Cancel button after the actions, when given. */
  onCancel?: () => void;
}

export function SchemaForm({ id, schema, actions, onSubmit, onInvalid, busy, initial, problems = NO_PROBLEMS, emptyText, onCancel }: SchemaFormProps) {
  const required = new Set(schema.required ?? []);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    let values: JsonRecord;
    try {
      values = valuesOf(schema, new FormData(event.currentTarget));
    } catch (error) {
      return onInvalid(error instanceof Error ? error.message : String(error));
    }
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    onSubmit(values, submitter?.value ?? actions[0]?.value ?? '');
  };
  const properties = Object.entries(schema.properties ?? {});
  return (
    <form id={id} onSubmit={submit} className="schema-form">
      {properties.length === 0 && <p className="muted">{emptyText ?? 'This workflow takes no input fields.'}</p>}
      {properties.map(([name, property]) => (
        <Field key={name} prefix={id} name={name} schema={property} isRequired={required.has(name)} initial={initial?.[name]} problems={problems} />
      ))}
      <div className="actions">
        {actions.map((action) => (
          <button key={action.value} type="submit" value={action.value} className={action.className} formNoValidate={action.skipsChecks} disabled={busy}>
            {action.label}
          </button>
        ))}
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
