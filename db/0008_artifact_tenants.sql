-- Uploaded artifacts belong to a tenant: each tenant has its own names, versions and numbering.
-- '' is "no tenant" (single-tenant deployments): a primary key column cannot be NULL. The projection's
-- version goes up with this migration, so the table is rebuilt from the log at the next start.
ALTER TABLE svc_artifacts ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE svc_artifacts DROP CONSTRAINT svc_artifacts_pkey;
ALTER TABLE svc_artifacts ADD PRIMARY KEY (tenant, name, version);
