// Writing a model's records: which of create, update and delete the caller may use (the operations
// /openapi.json publishes for the model and the scope each requires), and the record form generated
// from the model's create or update schema, with the API's 422 messages under their fields.
import { useState } from 'react';
import type { Identity, Json, JsonRecord } from '../../../src/client/index.js';
import { FormAlert, NO_PROBLEMS, PanelHeading, problemsOf, type FormProblems } from '../forms.js';
import { bodySchema, type OpenApiDoc, type OpenApiOperation } from '../openApi.js';
import { SchemaForm, type JsonSchema } from '../schemaForm.js';
import { hasScope, type Session } from '../session.js';

export interface ModelWrites {
  /** The record's key field (the read schema's one required field). */
  key: string;
  create?: JsonSchema;
  update?: JsonSchema;
  canDelete: boolean;
}

const isAllowed = (identity: Identity, operation: OpenApiOperation | undefined): operation is OpenApiOperation =>
  operation !== undefined && (operation['x-required-scope'] === undefined || hasScope(identity, operation['x-required-scope']));

/** What `identity` may write of model `slug`; the API decides again (a model's groups included). */
export function modelWrites(doc: OpenApiDoc, slug: string, identity: Identity): ModelWrites {
  const collection = doc.paths[`/models/${slug}/`] ?? {};
  const item = doc.paths[`/models/${slug}/{id}`] ?? {};
  const createSchema = bodySchema(doc, collection.post);
  const readName = collection.post?.requestBody?.content?.['application/json']?.schema?.$ref
    ?.split('/')
    .pop()
    ?.replace(/\.create$/, '.read');
  const key = (readName && doc.components.schemas[readName]?.required?.[0]) ?? 'id';
  return {
    key,
    ...(isAllowed(identity, collection.post) && createSchema ? { create: createSchema } : {}),
    ...(isAllowed(identity, item.patch) ? { update: bodySchema(doc, item.patch) ?? { type: 'object' } } : {}),
    canDelete: isAllowed(identity, item.delete),
  };
}

const isNullable = (schema: JsonSchema | undefined): boolean => Array.isArray(schema?.type) && schema.type.includes('null');

/** The fields an edit changes: those sent, and a nullable field emptied (null), never one left as it was. */
function changesOf(schema: JsonSchema, record: JsonRecord, values: JsonRecord): JsonRecord {
  const changes: JsonRecord = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const before: Json | undefined = record[name];
    if (name in values) {
      if (JSON.stringify(values[name]) !== JSON.stringify(before)) changes[name] = values[name]!;
    } else if (before !== null && before !== undefined && isNullable(property)) changes[name] = null;
  }
  return changes;
}

interface RecordFormProps {
  session: Session;
  model: string;
  writes: ModelWrites;
  /** The record edited; none for a new one. */
  record: JsonRecord | undefined;
  onSaved: (record: JsonRecord, isNew: boolean) => void;
  onCancel: () => void;
}

export function RecordForm({ session, model, writes, record, onSaved, onCancel }: RecordFormProps) {
  const [busy, setBusy] = useState(false);
  const [problems, setProblems] = useState<FormProblems>(NO_PROBLEMS);
  const schema = (record ? writes.update : writes.create) ?? { type: 'object' };
  const keyValue = record ? String(record[writes.key]) : '';
  const formId = `record-${model}`;
  const save = async (values: JsonRecord) => {
    setBusy(true);
    try {
      const crud = session.client.crud(model);
      const saved = record ? await crud.update(keyValue, changesOf(schema, record, values)) : await crud.create(values);
      onSaved(saved, !record);
    } catch (failure) {
      setProblems(problemsOf(failure, Object.keys(schema.properties ?? {})));
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="record-form-title" className="panel">
      <PanelHeading id="record-form-title">{record ? `Edit ${model} ${keyValue}` : `New ${model}`}</PanelHeading>
      <FormAlert formId={formId} problems={problems} />
      <SchemaForm
        id={formId}
        schema={schema}
        initial={record}
        problems={problems}
        actions={[{ value: 'save', label: record ? 'Save' : 'Create' }]}
        busy={busy}
        emptyText="This model has no field to fill in."
        onSubmit={(values) => void save(values)}
        onCancel={onCancel}
        onInvalid={(message) => setProblems({ fields: {}, summary: [message] })}
      />
    </section>
  );
}
