-- Who has written in a project's shared onboarding chat (issue 12): erasing a member finds their
-- messages there (each user message carries its author in server-written metadata) without
-- addressing the onboarding chat of every project of the org. Removed by the erasure of the member.
CREATE TABLE preview_authors (
  project_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  PRIMARY KEY (project_id, user_id)
);
CREATE INDEX preview_authors_by_user ON preview_authors (user_id, org_id);
