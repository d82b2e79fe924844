-- Idempotency keys of triggers: the latest claim of each key (read model of the idempotency-<hash>
-- streams). Rows past expires_at are deleted by a periodic sweep through the expires_at index; the
-- claim events stay in the log.
CREATE TABLE svc_idempotency_keys (
  key_hash     text PRIMARY KEY,
  workflow     text NOT NULL,
  run_id       uuid NOT NULL,
  request_hash text NOT NULL,
  claimed_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX svc_idempotency_keys_expiry_idx ON svc_idempotency_keys (expires_at);
