-- GDPR erasure (Art. 17): durable requests with per-store steps, and tombstones so an erased object
-- is never addressed (and so never recreated) again.
CREATE TABLE erasure_requests (
  id TEXT PRIMARY KEY,
  org_id TEXT,
  -- Who asked, pseudonymized too if they are themselves erased later.
  requested_by TEXT NOT NULL,
  subject_type TEXT NOT NULL CHECK (subject_type IN ('member', 'project', 'session', 'account')),
  -- A keyed hash of the subject: the audit trail never holds the erased identifier's owner.
  subject_hash TEXT NOT NULL,
  -- The raw id and what it reaches (JSON: { userId, orgIds, projectIds, sessionIds, deleteOrgIds }),
  -- needed while the job runs; both cleared when it completes.
  subject_id TEXT,
  plan TEXT,
  legal_basis TEXT NOT NULL,
  reason TEXT,
  status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  -- JSON: [{ name, status, at, detail }]
  steps TEXT NOT NULL,
  -- JSON: { ok, checkedAt, findings: [...] }
  verification TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  completed_at INTEGER
);
CREATE INDEX erasure_requests_by_org ON erasure_requests (org_id, id);

CREATE TABLE tombstones (
  subject_id TEXT PRIMARY KEY,
  subject_type TEXT NOT NULL,
  -- The org the object belonged to: only its members learn that it was erased (410); others get 404.
  org_id TEXT,
  request_id TEXT NOT NULL,
  erased_at INTEGER NOT NULL
);
