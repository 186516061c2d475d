-- An app's per-end-user limit per UTC week, from Monday 00:00 (issue 16.4, 2026-12-02), beside
-- the day and the month. NULL: no weekly limit.
ALTER TABLE apps ADD COLUMN end_user_weekly_limit_micros INTEGER;
