-- Data exports (GDPR Art. 15 and 20; docs/2026-12-02-data-export.md): a person's account, or an
-- org (by an owner), as one machine-readable archive. The archive itself lives in the export's own
-- DataExport Durable Object (its SQLite, in chunks), deleted when the link expires or an erasure
-- reaches it; this row is the request, its progress and the download link's SHA-256.
CREATE TABLE data_exports (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('account', 'org')),
  -- The person the archive is about (account), or the owner who asked for the org's.
  subject_user_id TEXT NOT NULL,
  org_id TEXT,
  requested_by TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  -- Units of work done and planned (a section, or one session's transcript).
  progress_done INTEGER NOT NULL DEFAULT 0,
  progress_total INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  completed_at INTEGER,
  expires_at INTEGER,
  -- base64url SHA-256 of the download secret; the secret itself is kept only beside the archive.
  secret_hash TEXT,
  size_bytes INTEGER,
  -- Set when the archive was deleted (expired): the row stays as the request's record.
  purged_at INTEGER
);
CREATE INDEX data_exports_by_subject ON data_exports (subject_user_id, id);
CREATE INDEX data_exports_by_org ON data_exports (org_id, id);
-- One export in progress per subject (the route answers 409 first; these close the race of two
-- requests at once).
CREATE UNIQUE INDEX data_exports_one_account_running ON data_exports (subject_user_id)
  WHERE kind = 'account' AND status IN ('pending', 'running');
CREATE UNIQUE INDEX data_exports_one_org_running ON data_exports (org_id)
  WHERE kind = 'org' AND status IN ('pending', 'running');
