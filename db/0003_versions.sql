-- Version administration read model: runtime toggles (null = the document's own flag) and forks.
CREATE TABLE svc_definition_versions (
  kind        text NOT NULL,
  name        text NOT NULL,
  version     text NOT NULL,
  enabled     boolean,
  forked_from text,
  file        text,
  definition  jsonb,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (kind, name, version)
);
