-- Runs: the read model of run-<id> streams (the journal itself is the events table).
CREATE TABLE svc_runs (
  id             uuid PRIMARY KEY,
  workflow       text NOT NULL,
  schema_version text NOT NULL,
  status         text NOT NULL,
  input          jsonb NOT NULL,
  output         jsonb,
  error          jsonb,
  status_code    integer,
  current_step   text,
  principal_id   text,
  tenant         text,
  approval       jsonb,
  last_seq       bigint NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX ON svc_runs (principal_id, created_at);
CREATE INDEX ON svc_runs (workflow, created_at);
CREATE INDEX ON svc_runs (status, updated_at);

-- Who is executing a run, until when. Coordination state, not a read model: never rebuilt.
CREATE TABLE svc_run_leases (
  run_id     uuid PRIMARY KEY,
  owner      text NOT NULL,
  expires_at timestamptz NOT NULL
);
