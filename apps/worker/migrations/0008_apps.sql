-- Apps (embeds) and end users (issue 15; docs/2026-12-02-apps-and-end-users.md). An app is an org's
-- registration of its own product: the origins its pages are served from, the projects its end users
-- may use, how the tenant's end-user tokens are verified, and per-end-user spend limits. Every table
-- carries org_id, so an org erased whole takes its rows along (erasure/steps.ts).

CREATE TABLE apps (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  name TEXT NOT NULL,
  -- How the tenant's tokens are verified: HS256 under one of app_secrets, or the tenant's public key
  -- (token_jwk, a public JWK as JSON) or JWKS (token_jwks_url), with the algorithm pinned here.
  token_type TEXT NOT NULL CHECK (token_type IN ('secret', 'public_key', 'jwks')),
  token_alg TEXT NOT NULL CHECK (token_alg IN ('HS256', 'RS256', 'ES256', 'EdDSA')),
  token_jwk TEXT,
  token_jwks_url TEXT,
  token_issuer TEXT NOT NULL,
  token_audience TEXT NOT NULL,
  max_token_lifetime_seconds INTEGER NOT NULL,
  -- Per end user, integer micro-dollars; NULL is no limit. Enforced by the ledger in a later step.
  end_user_daily_limit_micros INTEGER,
  end_user_monthly_limit_micros INTEGER,
  show_cost INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  -- A deleted app verifies nothing from that moment: every lookup filters on it.
  deleted_at INTEGER
);
CREATE INDEX apps_by_org ON apps (org_id, id);

-- Exact origins (scheme, host, port) a browser may call the exchange from; the preflight, which
-- carries no app id, looks the origin up across live apps.
CREATE TABLE app_origins (
  app_id TEXT NOT NULL REFERENCES apps (id),
  org_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  PRIMARY KEY (app_id, origin)
);
CREATE INDEX app_origins_by_origin ON app_origins (origin);

-- The projects an app's end users may use (each a project of the app's org).
CREATE TABLE app_projects (
  app_id TEXT NOT NULL REFERENCES apps (id),
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  PRIMARY KEY (app_id, project_id)
);
CREATE INDEX app_projects_by_project ON app_projects (project_id);

-- HS256 signing secrets of apps verified by `secret`. The secret itself is shown once and stored
-- sealed (AES-GCM under a key derived from the APP_SECRETS_KEY Worker secret, bound to app and kid),
-- because verifying an HMAC needs the key itself, not a hash of it. expires_at NULL is the current
-- secret; a rotated-out one is accepted until expires_at.
CREATE TABLE app_secrets (
  kid TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps (id),
  org_id TEXT NOT NULL,
  sealed TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX app_secrets_by_app ON app_secrets (app_id);

-- End users: the tenant's own users, as principals of the org (never Parley accounts), one per
-- (app, the tenant's id for them). The display name is the token's optional `name` claim.
CREATE TABLE end_users (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  app_id TEXT NOT NULL REFERENCES apps (id),
  external_id TEXT NOT NULL,
  name TEXT,
  created_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  UNIQUE (app_id, external_id)
);
CREATE INDEX end_users_by_org ON end_users (org_id, id);
