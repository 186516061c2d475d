-- Invitations by link (2026-12-02): an owner or admin invites someone who may have no account yet.
-- The link's secret is stored only as its SHA-256; the invitation is for one email and one role,
-- accepted once, within seven days, by a signed-in user with that email. Erased with the org, and
-- with the person it names (their email) or who made it (`invited_by` goes).
CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  token_hash TEXT NOT NULL UNIQUE,
  invited_by TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  accepted_at INTEGER,
  accepted_by TEXT,
  revoked_at INTEGER
);
CREATE INDEX invitations_by_org ON invitations (org_id, id);
CREATE INDEX invitations_by_email ON invitations (email);
