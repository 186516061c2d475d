-- Access that ends while a client is connected (issue 12): revocable access tokens, WebSocket connect
-- tickets, and a registry of open agent sockets so that a removal, a role change, a logout or an
-- erasure closes them at once instead of when the client next speaks.

-- Bumped when the user's rights change (a role change): access tokens carry the version they were
-- issued at, and one older than this is refused (the client refreshes for a new one).
ALTER TABLE users ADD COLUMN token_version INTEGER NOT NULL DEFAULT 0;

-- Single-use, short-lived tickets for the WebSocket upgrade, so that no bearer token travels in a
-- URL. Stored as SHA-256 hashes only; consumed by the first upgrade that presents one.
CREATE TABLE connect_tickets (
  ticket_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  -- The access token that asked for it: the socket lives no longer than that token would.
  family_id TEXT NOT NULL,
  token_version INTEGER NOT NULL,
  token_expires_at INTEGER NOT NULL,
  agent TEXT NOT NULL,
  name TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX connect_tickets_by_expiry ON connect_tickets (expires_at);
CREATE INDEX connect_tickets_by_user ON connect_tickets (user_id);

-- Open agent sockets, written by the agent on connect and removed on close. A row outliving its
-- socket (an object reset) is harmless: it only makes the agent re-check its sockets again, and it
-- is ignored after `expires_at`, when the socket's token has expired and the agent has closed it.
CREATE TABLE agent_connections (
  agent TEXT NOT NULL,
  name TEXT NOT NULL,
  connection_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  family_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (agent, name, connection_id)
);
CREATE INDEX agent_connections_by_user ON agent_connections (user_id, org_id);
CREATE INDEX agent_connections_by_family ON agent_connections (family_id);
CREATE INDEX agent_connections_by_expiry ON agent_connections (expires_at);

-- The sign-up grant is a welcome for a person, not for each org they create (issue 12): one row per
-- person, keyed by a keyed hash of their normalized email (no raw email, no user id), naming the
-- org that got it. Kept after an account is erased, so re-registering does not farm a second grant
-- (docs/ on data retention).
CREATE TABLE signup_grants (
  email_key TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  granted_at INTEGER NOT NULL
);
CREATE INDEX signup_grants_by_org ON signup_grants (org_id);
