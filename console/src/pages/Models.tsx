// Model records (the CRUD routes /models/{model}/): the models /openapi.json publishes a list route
// for, and the records of the one chosen, a page at a time, each record's JSON on demand.
import './admin.css';
import { useSearchParams } from 'react-router';
import type { Json, JsonRecord } from '../../../src/client/index.js';
import { ErrorNote, useLoaded, useTitle } from '../hooks.js';
import type { Session } from '../session.js';
import { JsonView } from '../ui.js';

const PAGE_SIZE = 25;
const MODEL_LIST_PATH = /^\/models\/([^/]+)\/$/;

async function listedModels(): Promise<string[]> {
  const response = await fetch('/openapi.json', { headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`/openapi.json: ${response.status}`);
  const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(document.paths)
    .filter(([path, operations]) => MODEL_LIST_PATH.test(path) && operations.get)
    .map(([path]) => MODEL_LIST_PATH.exec(path)![1]!)
    .sort();
}

const cellText = (value: Json | undefined): string =>
  value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);

function RecordTable({ model, records }: { model: string; records: JsonRecord[] }) {
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
          </tr>
        </thead>
        <tbody>
          {records.map((record, index) => (
            <tr key={cellText(record.id) || index} data-record={cellText(record.id)}>
              {columns.map((column) => (
                <td key={column}>{cellText(record[column])}</td>
              ))}
              <td>
                <details>
                  <summary>JSON</summary>
                  <JsonView value={record} label={`Record ${cellText(record.id) || index + 1} of ${model}`} />
                </details>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function ModelsPage({ session }: { session: Session }) {
  useTitle('Model records');
  const [params, setParams] = useSearchParams();
  const models = useLoaded(listedModels, []);
  const model = params.get('model') ?? models.value?.[0];
  const offset = Number(params.get('offset')) || 0;
  const records = useLoaded(() => (model ? session.client.crud(model).list({ limit: PAGE_SIZE, offset }) : Promise.resolve([])), [session, model, offset]);
  const go = (next: Record<string, string>) => setParams(new URLSearchParams(next));
  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Model records</h1>
      <ErrorNote error={models.error} />
      {models.value?.length === 0 && <p>No model publishes a list route.</p>}
      {models.value && models.value.length > 0 && (
        <label className="inline">
          Model{' '}
          <select value={model} onChange={(event) => go({ model: event.currentTarget.value })}>
            {models.value.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      )}
      <ErrorNote error={records.error} />
      {model && records.value && (records.value.length ? <RecordTable model={model} records={records.value} /> : <p>No record here.</p>)}
      <div className="pager">
        {model && offset > 0 && (
          <button type="button" className="secondary" onClick={() => go({ model, offset: String(Math.max(0, offset - PAGE_SIZE)) })}>
            Previous page
          </button>
        )}
        {model && records.value?.length === PAGE_SIZE && (
          <button type="button" onClick={() => go({ model, offset: String(offset + PAGE_SIZE) })}>
            Next page
          </button>
        )}
      </div>
    </section>
  );
}
