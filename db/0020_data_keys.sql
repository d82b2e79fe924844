-- Personal data (docs/privacy.md): one data key per subject (a user, a model record), wrapped by the
-- key-encryption key (SVC_DATA_KEY). Erasing a subject destroys its key: wrapped_key becomes NULL and
-- destroyed_at is set, so a value sealed with it reads as erased (null), while a key id this table
-- never held is a tampered value. Keys are coordination state beside the log, not history: rows are
-- never rebuilt from events (an erased key must never come back).
CREATE TABLE svc_data_keys (
  key_id       uuid PRIMARY KEY,
  subject_type text NOT NULL,
  subject_id   text NOT NULL,
  -- AES-256-GCM of the 32-byte data key under the KEK: "<nonce>.<ciphertext>.<tag>" (base64url).
  wrapped_key  text,
  -- Which KEK wrapped it: the first 16 hex digits of HMAC-SHA256(KEK, "svc kek id").
  kek_id       text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  destroyed_at timestamptz,
  CONSTRAINT svc_data_keys_wrapped_or_destroyed CHECK ((wrapped_key IS NULL) = (destroyed_at IS NOT NULL))
);
-- One live key per subject; a destroyed one stays as a tombstone.
CREATE UNIQUE INDEX svc_data_keys_subject_idx ON svc_data_keys (subject_type, subject_id);
-- Rotation rewraps keys by the KEK they are wrapped with.
CREATE INDEX svc_data_keys_kek_idx ON svc_data_keys (kek_id) WHERE wrapped_key IS NOT NULL;

-- Without SVC_DATA_KEY (development, tests), the KEK is generated once and kept here, so every
-- process of the deployment shares it; erasure still works (it destroys data keys), but the
-- database alone then opens every value. Production with personal data declared refuses this.
CREATE TABLE svc_data_kek_fallback (
  id  boolean PRIMARY KEY DEFAULT true CHECK (id),
  kek text NOT NULL
);

-- Read models hold blind indexes (HMAC) for lookups on encrypted values, never their clear text.
ALTER TABLE iam_users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE iam_users ADD COLUMN email_index text, ADD COLUMN phone_index text, ADD COLUMN federated_index text;
CREATE INDEX ON iam_users (email_index);
CREATE INDEX ON iam_users (phone_index);
CREATE INDEX ON iam_users (federated_index);
