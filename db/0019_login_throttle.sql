-- Login throttling's counters (src/iam/loginThrottle.ts): coordination state, not history, so a
-- table of its own beside the log. The columns are the ones rate-limiter-flexible's PostgreSQL store
-- reads and writes: a hashed key (limit, account and/or address), the attempts counted in the key's
-- window, and when the window ends (epoch milliseconds). Expired rows are deleted by the library.
CREATE TABLE svc_login_throttle (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);

-- The library's clean-up deletes by expiry every few minutes; this keeps it off a full scan.
CREATE INDEX svc_login_throttle_expire_idx ON svc_login_throttle (expire);
