-- End users' assistant sessions (issue 15; docs/2026-12-02-apps-and-end-users.md). A session opened
-- by an end user has owner_id = the end user's id (eu_...) and app_id = the app it was opened
-- through; a member's session has app_id NULL. The end user sees only sessions of their own app.
ALTER TABLE sessions ADD COLUMN app_id TEXT;
CREATE INDEX sessions_by_app_owner ON sessions (app_id, owner_id, id);
