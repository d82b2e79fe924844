-- Child workflows: the child run a parent's Workflow step waits for (null otherwise). Part of the
-- svc_runs read model, so a resume of a paused parent returns it to waiting_child.
ALTER TABLE svc_runs ADD COLUMN awaited_child uuid;
