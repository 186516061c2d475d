-- Assistants the tenant shapes (issue 29; docs/2026-12-06-assistant-profiles.md): the platform's
-- model catalogue, the models each org allows, assistant profiles with immutable versions, and
-- which profile each project, app and onboarding preview runs.

-- The platform operator's catalogue entries (routes/operator-models.ts), merged by id over the
-- built-in entries of apps/worker/src/assistants/catalogue-config.ts: an entry here wins. `entry` is
-- the operator's JSON as catalogueEntrySchema reads it (prices in OpenRouter's published shape,
-- checked to convert exactly to micro-dollars per million tokens before it is written).
CREATE TABLE catalogue_models (
  id TEXT PRIMARY KEY,
  entry TEXT NOT NULL,
  -- A retired model cannot be newly chosen; profiles and sessions naming it are refused a turn.
  retired_at INTEGER,
  updated_at INTEGER NOT NULL
);

-- The models an org's members may use, in the order the org listed them. No row for an org: it
-- never chose, and has the platform's default set (the default model).
CREATE TABLE org_models (
  org_id TEXT NOT NULL,
  model_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (org_id, model_id)
);

-- An assistant profile of an org; its content is its versions'. `current_version` moves only by
-- a conditional update in the batch that writes the next version, so two edits at once cannot
-- both become version N+1 (one is refused with 409).
CREATE TABLE assistant_profiles (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  current_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX assistant_profiles_by_org ON assistant_profiles (org_id, id);

-- Every version of a profile, never changed once written (an erasure pseudonymizes author_id and
-- scrubs an erased person's identifiers from the text, as everywhere in D1). A rollback writes a
-- new version equal to an old one (restored_from names it).
CREATE TABLE assistant_profile_versions (
  profile_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  instructions TEXT NOT NULL,
  model TEXT NOT NULL,
  temperature REAL,
  top_p REAL,
  max_output_tokens INTEGER,
  welcome TEXT,
  -- JSON arrays of strings.
  suggestions TEXT NOT NULL,
  tools TEXT NOT NULL,
  author_id TEXT,
  restored_from INTEGER,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (profile_id, version)
);
CREATE INDEX assistant_profile_versions_by_org ON assistant_profile_versions (org_id, author_id);

-- Which profile runs where: a project's sessions (members' and end users'), its onboarding
-- preview, an app's end users, the org's previews. NULL: the next in line, then Parley's default.
ALTER TABLE projects ADD COLUMN default_profile_id TEXT;
ALTER TABLE projects ADD COLUMN preview_profile_id TEXT;
ALTER TABLE apps ADD COLUMN profile_id TEXT;
ALTER TABLE organizations ADD COLUMN preview_profile_id TEXT;

-- The model a member picked for their session (one of the org's allowed models); NULL: the
-- profile's.
ALTER TABLE sessions ADD COLUMN model TEXT;
