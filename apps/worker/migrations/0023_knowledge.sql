-- Knowledge (issue 31, docs/2026-12-06-knowledge.md): a project's documents. Their text, passages
-- and FTS5 index live in the project's KnowledgeBase Durable Object; D1 holds what is listed,
-- authorized and counted against the org's storage quota.
CREATE TABLE knowledge_documents (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  name TEXT NOT NULL,
  content_type TEXT NOT NULL,
  -- The current version, and its upload's size (what the quota counts).
  version INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  created_by TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX knowledge_documents_project ON knowledge_documents (project_id, id);
CREATE INDEX knowledge_documents_org ON knowledge_documents (org_id);

-- Every version uploaded (its text is kept for the current one only).
CREATE TABLE knowledge_versions (
  document_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  org_id TEXT NOT NULL,
  project_id TEXT NOT NULL,
  content_type TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  text_chars INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  created_by TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (document_id, version)
);
CREATE INDEX knowledge_versions_org ON knowledge_versions (org_id);

-- A profile may ask for retrieval before a turn's first model call (knowledge/tool.ts
-- `retrieveForTurn`): 1 searches the project's documents with the person's message first.
ALTER TABLE assistant_profile_versions ADD COLUMN knowledge_retrieval INTEGER NOT NULL DEFAULT 0;
