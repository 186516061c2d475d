-- Mail (issue 32, 2026-12-06; docs/2026-12-06-mail.md): verified email addresses, single-use account
-- links (verification, email change, password reset), the mail outbox, and owners' opt-ins to
-- receipts and limit alerts by mail.

-- When the account's address was proven (a link mailed to it was used). Accounts made before mail
-- existed count as verified, so nothing already running changes: the migration sets it to when they
-- were made. A sign-up from now on writes NULL until its link is used.
ALTER TABLE users ADD COLUMN email_verified_at INTEGER;
UPDATE users SET email_verified_at = created_at;

-- The org made with the sign-up: it receives the sign-up grant once the address is verified (the
-- grant is per person, keyed by the verified address in signup_grants, as before).
ALTER TABLE users ADD COLUMN signup_org_id TEXT;

-- Single-use links for one account, stored only as the SHA-256 of their secret. `email` is the
-- address the link was mailed to, the one its use proves. `used_at` marks a link used, expired by a
-- newer one of the same purpose, or cancelled (a password change cancels an email change);
-- `used_by` is the request that consumed it, so the writes that follow run only for that one.
CREATE TABLE account_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  purpose TEXT NOT NULL CHECK (purpose IN ('verify_email', 'change_email', 'reset_password')),
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  used_by TEXT
);
CREATE INDEX account_tokens_by_user ON account_tokens (user_id, purpose);
CREATE INDEX account_tokens_by_expiry ON account_tokens (expires_at);

-- The outbox: every mail is a row written with the change it reports (same batch), then sent by the
-- MailOutbox Durable Object's alarm with retries. `data` is what the message is made from (its link,
-- names, amounts), sealed with a key D1 never sees and cleared once the mail is sent or given up;
-- the row stays as the record of what was sent to whom, until `MAIL_RECORD_DAYS` later. `user_id`
-- and `org_id` say whose record it is (erasure and export); `dedupe_key` makes a retried caller
-- (a webhook delivered twice) queue one mail.
CREATE TABLE mail_outbox (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  recipient TEXT NOT NULL,
  user_id TEXT,
  org_id TEXT,
  dedupe_key TEXT UNIQUE,
  data TEXT,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  sent_at INTEGER
);
CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);
CREATE INDEX mail_outbox_by_user ON mail_outbox (user_id, kind, created_at);
CREATE INDEX mail_outbox_by_org ON mail_outbox (org_id);
CREATE INDEX mail_outbox_by_recipient ON mail_outbox (recipient);

-- An owner's choice of billing mail for one org: receipts of credited top-ups and limit alerts.
-- Off by default (opt-in); kept with the membership, so leaving the org or losing the owner role
-- ends it (mail goes to members who are owners when it is sent).
ALTER TABLE memberships ADD COLUMN mail_receipts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memberships ADD COLUMN mail_limit_alerts INTEGER NOT NULL DEFAULT 0;
