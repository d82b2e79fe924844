// Model records (the CRUD routes /models/{model}/): the models /openapi.json publishes a list route
// for, the records of the one chosen a page at a time with each record's JSON on demand, and, as the
// caller's scopes allow, a new record, an edit and a delete.
import './admin.css';
import { useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import type { Json, JsonRecord } from '../../../src/client/index.js';
import { ConfirmButton, usePanel } from '../forms.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import { loadOpenApi, type OpenApiDoc } from '../openApi.js';
import { messageOf, type Session } from '../session.js';
import { JsonView } from '../ui.js';
import { modelWrites, RecordForm, type ModelWrites } from './ModelRecordForm.js';

const PAGE_SIZE = 25;
const MODEL_LIST_PATH = /^\/models\/([^/]+)\/$/;

const listedModels = (doc: OpenApiDoc): string[] =>
  Object.entries(doc.paths)
    .filter(([path, operations]) => MODEL_LIST_PATH.test(path) && operations.get)
    .map(([path]) => MODEL_LIST_PATH.exec(path)![1]!)
    .sort();

const cellText = (value: Json | undefined): string =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

interface RecordTableProps {
  model: string;
  records: JsonRecord[];
  keyField: string;
  actions?: (record: JsonRecord, name: string) => ReactNode;
}

function RecordTable({ model, records, keyField, actions }: RecordTableProps) {
  const columns = [...new Set(records.flatMap((record) => Object.keys(record)))];
  return (
    <div className="table-scroll">
      <table className="records">
        <caption className="visually-hidden">Records of {model}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            <th scope="col">Record</th>
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {records.map((record, index) => {
            const name = `${model} ${cellText(record[keyField]) || index + 1}`;
            return (
              <tr key={cellText(record[keyField]) || index} data-record={cellText(record[keyField])}>
                {columns.map((column) => (
                  <td key={column}>{cellText(record[column])}</td>
                ))}
                <td>
                  <details>
                    <summary>JSON</summary>
                    <JsonView value={record} label={`Record ${cellText(record[keyField]) || index + 1} of ${model}`} />
                  </details>
                </td>
                {actions && <td className="row-actions">{actions(record, name)}</td>}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Edit and Delete of one record, as `writes` allows. */
function useRecordActions(session: Session, model: string | undefined, writes: ModelWrites | undefined, onChanged: (notice: string) => void) {
  const panel = usePanel<{ model: string; record: JsonRecord | undefined }>(() => document.getElementById('models-title'));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const remove = async (record: JsonRecord, name: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await session.client.crud(model!).delete(String(record[writes!.key]));
      document.getElementById('models-title')?.focus();
      onChanged(`Deleted ${name}.`);
    } catch (failure) {
      setError(`${name}: ${messageOf(failure)}`);
    } finally {
      setBusy(false);
    }
  };
  const actions =
    model && writes && (writes.update || writes.canDelete)
      ? (record: JsonRecord, name: string) => (
          <>
            {writes.update && (
              <button type="button" className="secondary" aria-label={`Edit ${name}`} onClick={() => panel.show({ model, record })}>
                Edit
              </button>
            )}
            {writes.canDelete && <ConfirmButton label="Delete" what={name} busy={busy} onConfirm={() => void remove(record, name)} />}
          </>
        )
      : undefined;
  return { panel, actions, error };
}

interface ModelPickerProps {
  models: string[];
  model: string | undefined;
  canCreate: boolean;
  onPick: (model: string) => void;
  onNew: () => void;
}

function ModelPicker({ models, model, canCreate, onPick, onNew }: ModelPickerProps) {
  if (models.length === 0) return <p>No model publishes a list route.</p>;
  return (
    <div className="toolbar">
      <label className="inline">
        Model{' '}
        <select value={model} onChange={(event) => onPick(event.currentTarget.value)}>
          {models.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      {model && canCreate && (
        <button type="button" onClick={onNew}>
          New {model}
        </button>
      )}
    </div>
  );
}

/** Previous and next pages of PAGE_SIZE records; `count` is how many this page holds. */
function Pager({ count, offset, onGo }: { count: number | undefined; offset: number; onGo: (offset: number) => void }) {
  return (
    <div className="pager">
      {offset > 0 && (
        <button type="button" className="secondary" onClick={() => onGo(Math.max(0, offset - PAGE_SIZE))}>
          Previous page
        </button>
      )}
      {count === PAGE_SIZE && (
        <button type="button" onClick={() => onGo(offset + PAGE_SIZE)}>
          Next page
        </button>
      )}
    </div>
  );
}

export function ModelsPage({ session }: { session: Session }) {
  useTitle('Model records');
  const [params, setParams] = useSearchParams();
  const [notice, setNotice] = useState('');
  const doc = useLoaded(loadOpenApi, []);
  const models = doc.value && listedModels(doc.value);
  const model = params.get('model') ?? models?.[0];
  const offset = Number(params.get('offset')) || 0;
  const records = useLoaded(() => (model ? session.client.crud(model).list({ limit: PAGE_SIZE, offset }) : Promise.resolve([])), [session, model, offset]);
  const writes = doc.value && model ? modelWrites(doc.value, model, session.identity) : undefined;
  const changed = (text: string) => {
    setNotice(text);
    records.reload();
  };
  const { panel, actions, error } = useRecordActions(session, model, writes, changed);
  const go = (next: Record<string, string>) => setParams(new URLSearchParams(next));
  const editing = panel.open?.model === model ? panel.open : undefined;
  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title" tabIndex={-1}>
        Model records
      </h1>
      <ErrorNote error={doc.error} />
      {models && (
        <ModelPicker
          models={models}
          model={model}
          canCreate={Boolean(writes?.create)}
          onPick={(name) => go({ model: name })}
          onNew={() => model && panel.show({ model, record: undefined })}
        />
      )}
      <p role="status" className="notice">
        {notice}
      </p>
      {editing && writes && (
        <RecordForm
          key={cellText(editing.record?.[writes.key]) || 'new'}
          session={session}
          model={editing.model}
          writes={writes}
          record={editing.record}
          onCancel={panel.close}
          onSaved={(saved, isNew) => {
            panel.close();
            changed(`${isNew ? 'Created' : 'Saved'} ${editing.model} ${cellText(saved[writes.key])}.`);
          }}
        />
      )}
      <ErrorNote error={records.error ?? error} />
      {model && records.value?.length === 0 && <p>No record here.</p>}
      {model && records.value?.length ? <RecordTable model={model} records={records.value} keyField={writes?.key ?? 'id'} actions={actions} /> : null}
      {model && <Pager count={records.value?.length} offset={offset} onGo={(at) => go({ model, offset: String(at) })} />}
    </section>
  );
}
