-- Federation providers saved through the admin API (a projection of federation-<name> streams).
CREATE TABLE svc_federation_providers (
  name       text PRIMARY KEY,
  document   jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);

-- One-time OAuth states: shared by every worker, consumed atomically, short-lived. Protocol state,
-- not a read model: never rebuilt.
CREATE TABLE svc_oauth_states (
  state_hash   text PRIMARY KEY,
  provider     text NOT NULL,
  code_verifier text NOT NULL,
  nonce        text NOT NULL,
  binding_hash text NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX ON svc_oauth_states (expires_at);
