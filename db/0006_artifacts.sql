-- Uploaded artifact versions: a projection of ArtifactUploaded events (project files live in memory).
CREATE TABLE svc_artifacts (
  name        text NOT NULL,
  version     text NOT NULL,
  type        text NOT NULL,
  content     jsonb NOT NULL,
  hash        text NOT NULL,
  description text,
  uploaded_by text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (name, version)
);
