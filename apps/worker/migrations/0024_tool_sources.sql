-- Tools from the tenant's own product (issue 30; docs/2026-12-06-tools.md): an org's tool sources
-- (remote MCP servers and HTTP actions) and the record of every tool call.

-- A tool source of an org. `url` is the MCP endpoint, or the base URL of the HTTP actions (every
-- action's URL is built on its origin); it is the audience of the identity tokens Parley signs for
-- the source's calls. `tools` is the JSON list of the source's tools as last listed (MCP) or written
-- (HTTP actions): name, description, input schema, read or write. The static credential, when
-- there is one, is kept sealed (AES-GCM under APP_SECRETS_KEY, bound to the source id): the API
-- never returns it. `version` moves on every change of what a call uses (URL, credential, tools):
-- the source's client object drops a connection made under an older one.
CREATE TABLE tool_sources (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('mcp', 'http')),
  name TEXT NOT NULL,
  description TEXT,
  url TEXT NOT NULL,
  price_micros INTEGER NOT NULL DEFAULT 0 CHECK (price_micros >= 0),
  credential_header TEXT,
  credential_sealed TEXT,
  -- JSON: per MCP tool name, 'read' or 'write' as an owner or admin marked it (over the server's
  -- readOnlyHint).
  access_overrides TEXT NOT NULL DEFAULT '{}',
  tools TEXT NOT NULL DEFAULT '[]',
  tools_listed_at INTEGER,
  version INTEGER NOT NULL DEFAULT 1,
  -- Health: calls that failed in a row (reset by a success); unhealthy at TOOL_SOURCE_UNHEALTHY_AFTER.
  consecutive_failures INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  last_error_at INTEGER,
  last_success_at INTEGER,
  created_by TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (org_id, name)
);
CREATE INDEX tool_sources_by_org ON tool_sources (org_id, id);

-- One row per tool call: who, where, which tool, how it went. Never its arguments or its result
-- (those are in the session's transcript, which the session's owner sees and erasure deletes).
CREATE TABLE tool_calls (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  source_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  session_id TEXT,
  project_id TEXT,
  -- The member (user id) or end user (eu_ id) the call was made for.
  caller_kind TEXT NOT NULL CHECK (caller_kind IN ('member', 'end_user')),
  caller_id TEXT NOT NULL,
  app_id TEXT,
  access TEXT NOT NULL CHECK (access IN ('read', 'write')),
  -- Who approved a write (the person in the chat), null for a read.
  approved_by TEXT,
  status TEXT NOT NULL,
  error_code TEXT,
  duration_ms INTEGER NOT NULL,
  request_bytes INTEGER NOT NULL,
  response_bytes INTEGER NOT NULL,
  price_micros INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX tool_calls_by_session ON tool_calls (session_id, created_at);
CREATE INDEX tool_calls_by_org ON tool_calls (org_id, created_at);
CREATE INDEX tool_calls_by_caller ON tool_calls (caller_id);
CREATE INDEX tool_calls_by_source ON tool_calls (source_id);
