-- Run search (GET /api/runs): keyset pages on (created_at, id), newest first, each filter combination
-- read from an index in page order. The tenant is indexed as a key that is never NULL, because a
-- `tenant IS NULL` condition does not let the planner use the index order; '=' || tenant keeps the
-- tenant '' apart from no tenant. Status is in every index: a status list (or none: every status) is
-- one index range per status, merged in order (runs/queries.ts).
ALTER TABLE svc_runs ADD COLUMN parent_run_id uuid;

DROP INDEX svc_runs_principal_id_created_at_idx;
DROP INDEX svc_runs_workflow_created_at_idx;
CREATE INDEX svc_runs_search_idx ON svc_runs ((coalesce('=' || tenant, '')), status, created_at, id);
CREATE INDEX svc_runs_search_principal_idx ON svc_runs ((coalesce('=' || tenant, '')), principal_id, status, created_at, id);
CREATE INDEX svc_runs_search_workflow_idx ON svc_runs ((coalesce('=' || tenant, '')), workflow, status, created_at, id);
CREATE INDEX svc_runs_search_principal_workflow_idx ON svc_runs ((coalesce('=' || tenant, '')), principal_id, workflow, status, created_at, id);
-- Children of one run are few: any other filter is checked on them.
CREATE INDEX svc_runs_parent_idx ON svc_runs (parent_run_id, created_at, id) WHERE parent_run_id IS NOT NULL;
