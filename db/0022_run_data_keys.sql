-- Runs' personal data (spec.personal_data, docs/privacy.md): one data key per run, subject_type 'run',
-- subject_id '<principal user id>:<run id>'. Erasing the principal destroys all of its runs' keys
-- (by the part before ':'); a run's expiry destroys its own (by the part after ':').
CREATE INDEX svc_data_keys_run_owner_idx ON svc_data_keys (split_part(subject_id, ':', 1)) WHERE subject_type = 'run';
CREATE INDEX svc_data_keys_run_item_idx ON svc_data_keys (split_part(subject_id, ':', 2)) WHERE subject_type = 'run';
