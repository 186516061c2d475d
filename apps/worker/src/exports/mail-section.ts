import { mailRecordIds } from "../db/mail-records.ts";
import { time } from "./items.ts";
import { all, ID_LIST } from "./read.ts";

/**
 * The mail sections of an archive (docs/2026-12-06-mail.md): which mails were sent, to which
 * address, when, and what became of them; and, for a person, their account links. Never a mail's
 * content (its sealed data) nor a link's secret or hash: what a link was for, and when it ended.
 */
interface MailRecordRow {
  id: string;
  kind: string;
  recipient: string;
  org_id: string | null;
  status: string;
  attempts: number;
  created_at: number;
  sent_at: number | null;
}

const MAIL_COLUMNS = "id, kind, recipient, org_id, status, attempts, created_at, sent_at";

const mailItems = (rows: MailRecordRow[]) =>
  rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    to: r.recipient,
    orgId: r.org_id,
    status: r.status,
    attempts: r.attempts,
    createdAt: time(r.created_at),
    sentAt: time(r.sent_at),
  }));

/** A person's: the mails about them or to their address, and their account links. */
export async function accountMail(db: D1Database, userId: string) {
  const user = await db
    .prepare("SELECT email FROM users WHERE id = ?")
    .bind(userId)
    .first<{ email: string }>();
  const ids = await mailRecordIds(db, { userId, email: user?.email });
  const messages = await all<MailRecordRow>(
    db,
    `SELECT ${MAIL_COLUMNS} FROM mail_outbox WHERE id IN ${ID_LIST} ORDER BY id`,
    JSON.stringify(ids),
  );
  const links = await all<{
    purpose: string;
    email: string;
    created_at: number;
    expires_at: number;
    used_at: number | null;
  }>(
    db,
    `SELECT purpose, email, created_at, expires_at, used_at FROM account_tokens
     WHERE user_id = ? ORDER BY created_at`,
    userId,
  );
  return {
    messages: mailItems(messages),
    links: links.map((l) => ({
      purpose: l.purpose,
      email: l.email,
      createdAt: time(l.created_at),
      expiresAt: time(l.expires_at),
      usedAt: time(l.used_at),
    })),
  };
}

/** An org's: its invitations, receipts and alerts by mail. */
export async function orgMail(db: D1Database, orgId: string) {
  return mailItems(
    await all<MailRecordRow>(
      db,
      `SELECT ${MAIL_COLUMNS} FROM mail_outbox WHERE org_id = ? ORDER BY id`,
      orgId,
    ),
  );
}
