-- Server API keys (issue 15): org-scoped credentials for a tenant's own servers, with scopes
-- (docs/2026-12-02-api-keys.md). A key is `prly_sk_<public id>_<secret>`; only `prefix`
-- (`prly_sk_<public id>`, what lists show and what a request is looked up by) and a SHA-256 of
-- the whole key are kept: the secret is shown once, at creation, and cannot be read back.
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  name TEXT NOT NULL,
  prefix TEXT NOT NULL UNIQUE,
  -- base64url SHA-256 of the whole key (auth/api-keys.ts says why not a slow or keyed hash).
  secret_hash TEXT NOT NULL,
  -- JSON array of scopes (API_KEY_SCOPES in packages/shared).
  scopes TEXT NOT NULL,
  -- The member who made it; their pseudonym once they are erased (the key is the org's and lives on).
  created_by TEXT,
  created_at INTEGER NOT NULL,
  -- Moved at most once a minute (not a write per request).
  last_used_at INTEGER,
  expires_at INTEGER,
  revoked_at INTEGER
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, id);
