-- Approvals: a projection of approval_requested / approval_decided run events.
CREATE TABLE svc_approvals (
  approval_id    uuid PRIMARY KEY,
  run_id         uuid NOT NULL,
  step_id        text NOT NULL,
  kind           text NOT NULL,
  workflow       text NOT NULL,
  title          text NOT NULL,
  instruction    text,
  form           jsonb NOT NULL,
  display        jsonb NOT NULL,
  required_group text,
  requester_id   text,
  tenant         text,
  status         text NOT NULL,
  decision       text,
  decided_by     text,
  decided_at     timestamptz,
  "values"       jsonb,
  comment        text,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz
);
CREATE INDEX ON svc_approvals (status, expires_at);
CREATE INDEX ON svc_approvals (run_id, step_id);
