-- A tool source an owner or admin switched off (issue 30, docs/2026-12-06-tools.md, "Editing a
-- source"): its tools stay switched on in the profiles that name them, but no turn offers them
-- and a call made under the version before the switch is refused. 1 = on (every source so far).
ALTER TABLE tool_sources ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1));
