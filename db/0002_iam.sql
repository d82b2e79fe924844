-- IAM read models, all projections of user-, role-, unique- and token- streams. No foreign keys:
-- each table is rebuilt from the log on its own. Indexes are left unnamed so that a rebuilt table
-- (CREATE TABLE ... LIKE ... INCLUDING ALL) gets the same index names.
CREATE TABLE iam_users (
  id                 uuid PRIMARY KEY,
  email              text NOT NULL,
  phone_number       text,
  hashed_password    text,
  is_active          boolean NOT NULL,
  tenant             text,
  federated_provider text,
  federated_sub      text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);
CREATE INDEX ON iam_users (lower(email));
CREATE INDEX ON iam_users (phone_number);
CREATE INDEX ON iam_users (federated_provider, federated_sub);

CREATE TABLE iam_roles (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  description text NOT NULL,
  scopes      text[] NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX ON iam_roles (name);

CREATE TABLE iam_user_roles (
  user_id     uuid NOT NULL,
  role_id     uuid NOT NULL,
  assigned_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, role_id)
);
CREATE INDEX ON iam_user_roles (role_id);

-- Tokens of a user issued before ended_at are refused; kept after the user is deleted.
CREATE TABLE iam_session_ends (
  user_id  uuid PRIMARY KEY,
  ended_at timestamptz NOT NULL,
  reason   text NOT NULL
);

CREATE TABLE iam_revoked_tokens (
  jti        text PRIMARY KEY,
  user_id    text NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz NOT NULL
);
CREATE INDEX ON iam_revoked_tokens (expires_at);
