import { newId } from "@parley/shared";
import { mailConfig } from "./config.ts";
import { buildMime } from "./mime.ts";
import { openMailData, sealMailData } from "./seal.ts";
import { type MailData, type MailKind, renderMail } from "./templates.ts";
import { mailerFor } from "./transports.ts";

/**
 * The mail outbox (docs/2026-12-06-mail.md). A mail is a `mail_outbox` row written in the same D1
 * batch as the change it reports (a token issued, an invitation made), so it exists exactly when
 * the change does: never lost, never sent for a change that did not happen. The request then asks
 * the MailOutbox Durable Object to send (`sendQueuedMail`, through `waitUntil`: the answer never
 * waits for a mail server, and a failed send never fails the request). The object's alarm sends
 * what is due, retries with backoff, and marks each row sent or failed; its data (links, names) is
 * sealed while it waits and cleared after. Nothing of a mail (address, subject, body, link) is
 * logged: only its kind and what became of it.
 */

export interface QueuedMail<K extends MailKind> {
  kind: K;
  to: string;
  data: MailData[K];
  /** The account the mail is about (erasure and export find it by this), if any. */
  userId?: string | null;
  /** The org it is about (an invitation, a receipt, an alert), if any. */
  orgId?: string | null;
  /** One mail per key however often the caller runs (a webhook delivered twice). */
  dedupeKey?: string | null;
}

/** Attempts before a mail is given up (about 2.3 hours of backoff in all). */
export const MAIL_ATTEMPTS = 12;
/** How long a claimed row is the claimer's before another drain may try it. */
const CLAIM_MS = 60_000;
/** Rows one alarm run sends at most before it runs again. */
const BATCH = 20;
/** How long the record of a sent (or failed) mail is kept: kind, recipient, when. */
export const MAIL_RECORD_DAYS = 30;

/** The wait before attempt `attempts + 1`: 2 s doubling, at most an hour. */
export const backoffMs = (attempts: number): number => Math.min(1000 * 2 ** attempts, 3_600_000);

/**
 * A statement that queues a mail, to ride in the batch of the change it reports. `onlyIf` (SQL
 * with `?` placeholders and its bindings) makes it conditional on that change having happened,
 * e.g. `EXISTS (SELECT 1 FROM invitations WHERE id = ?)`.
 */
export async function queueMailStatement<K extends MailKind>(
  env: Env,
  mail: QueuedMail<K>,
  options: { onlyIf?: { sql: string; bindings: unknown[] }; now?: number } = {},
): Promise<D1PreparedStatement> {
  const now = options.now ?? Date.now();
  const id = newId("mail", now);
  const sealed = await sealMailData(env, id, mail.data);
  return env.DB.prepare(
    `INSERT INTO mail_outbox (id, kind, recipient, user_id, org_id, dedupe_key, data, next_attempt_at, created_at)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8 WHERE ${options.onlyIf?.sql ?? "1"}
     ON CONFLICT (dedupe_key) DO NOTHING`,
  ).bind(
    id,
    mail.kind,
    mail.to.trim().toLowerCase(),
    mail.userId ?? null,
    mail.orgId ?? null,
    mail.dedupeKey ?? null,
    sealed,
    now,
    ...(options.onlyIf?.bindings ?? []),
  );
}

/** The one outbox object (mail volume is a person's actions, far below one object's pace). */
export const mailOutbox = (env: Env) => env.MAIL_OUTBOX.get(env.MAIL_OUTBOX.idFromName("outbox"));

/**
 * Asks the outbox to send what is queued, after the answer (`waitUntil`). If even this fails, the
 * rows wait in D1 and go with the next mail's run or the hourly cron's (index.ts `scheduled`).
 */
export function sendQueuedMail(
  env: Env,
  ctx: { waitUntil(promise: Promise<unknown>): void },
): void {
  ctx.waitUntil(
    mailOutbox(env)
      .kick()
      .catch(() => log({ outcome: "kick_failed" })),
  );
}

/** Queues one mail on its own (no change to ride with) and asks for it to be sent. */
export async function queueMail<K extends MailKind>(
  env: Env,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  mail: QueuedMail<K>,
): Promise<void> {
  await (await queueMailStatement(env, mail)).run();
  sendQueuedMail(env, ctx);
}

const log = (fields: Record<string, string | number | null>) =>
  console.log(JSON.stringify({ level: "info", source: "mail", ...fields }));

interface DueRow {
  id: string;
  kind: MailKind;
  recipient: string;
  data: string | null;
  attempts: number;
  next_attempt_at: number;
}

/** Sends one claimed row and records what became of it. */
async function deliver(env: Env, row: DueRow, now: number): Promise<void> {
  const db = env.DB;
  const finish = (status: "sent" | "failed", reason: string | null) =>
    db
      .prepare(
        `UPDATE mail_outbox SET status = ?, data = NULL, last_error = ?, attempts = attempts + ?,
           sent_at = CASE WHEN ? = 'sent' THEN ? ELSE NULL END
         WHERE id = ? AND status = 'pending'`,
      )
      .bind(status, reason, status === "sent" || reason !== "expired" ? 1 : 0, status, now, row.id)
      .run();
  const data = row.data === null ? null : await openMailData(env, row.id, row.data);
  if (data === null) {
    // Sealed under a key since replaced, or tampered with: it can never be sent.
    await finish("failed", "unreadable");
    log({ kind: row.kind, outcome: "failed", reason: "unreadable" });
    return;
  }
  const expiresAt = (data as { expiresAt?: number }).expiresAt;
  if (typeof expiresAt === "number" && expiresAt <= now) {
    // Its link no longer works: delivering it would only confuse.
    await finish("failed", "expired");
    log({ kind: row.kind, outcome: "dropped", reason: "expired" });
    return;
  }
  let outcome: Awaited<ReturnType<ReturnType<typeof mailerFor>["send"]>>;
  try {
    const config = mailConfig(env);
    const raw = buildMime(renderMail(row.kind, data as MailData[MailKind]), {
      from: config.from,
      to: row.recipient,
      messageId: `<${row.id}@${config.from.addr.split("@")[1] ?? "parley"}>`,
      kind: row.kind,
    });
    outcome = await mailerFor(env).send({ from: config.from, to: row.recipient, raw });
  } catch (error) {
    // A configuration mistake (mail/config.ts) or a template bug: kept and retried, loudly.
    outcome = { ok: false, permanent: false, reason: "not_built" };
    console.error(
      JSON.stringify({
        level: "error",
        source: "mail",
        kind: row.kind,
        outcome: "not_built",
        error: error instanceof Error ? error.message : "unknown",
      }),
    );
  }
  if (outcome.ok) {
    await finish("sent", null);
    log({ kind: row.kind, outcome: "sent", attempts: row.attempts + 1 });
    return;
  }
  const attempts = row.attempts + 1;
  if (outcome.permanent || attempts >= MAIL_ATTEMPTS) {
    await finish("failed", outcome.reason);
    console.warn(
      JSON.stringify({
        level: "warn",
        source: "mail",
        kind: row.kind,
        outcome: "failed",
        reason: outcome.reason,
        attempts,
      }),
    );
    return;
  }
  await db
    .prepare(
      "UPDATE mail_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ? AND status = 'pending'",
    )
    .bind(attempts, now + backoffMs(attempts), outcome.reason, row.id)
    .run();
  log({ kind: row.kind, outcome: "retry", reason: outcome.reason, attempts });
}

/**
 * Sends every due mail (in batches), then sweeps old records and links, and returns when the next
 * pending mail is due (null: none). Each row is claimed before it is sent, so two drains at once
 * (the alarm retried while one runs) never send a mail twice.
 */
export async function drainOutbox(env: Env, now = Date.now()): Promise<number | null> {
  const db = env.DB;
  for (let round = 0; round < 10; round++) {
    const { results } = await db
      .prepare(
        `SELECT id, kind, recipient, data, attempts, next_attempt_at FROM mail_outbox
         WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ${BATCH}`,
      )
      .bind(now)
      .all<DueRow>();
    if (results.length === 0) break;
    const claimed = await db.batch(
      results.map((row) =>
        db
          .prepare(
            "UPDATE mail_outbox SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?",
          )
          .bind(now + CLAIM_MS, row.id, row.next_attempt_at),
      ),
    );
    const mine = results.filter((_, i) => claimed[i]?.meta.changes === 1);
    await Promise.all(mine.map((row) => deliver(env, row, now)));
    if (results.length < BATCH) break;
    now = Date.now();
  }
  await db.batch([
    db
      .prepare("DELETE FROM mail_outbox WHERE status <> 'pending' AND created_at < ?")
      .bind(now - MAIL_RECORD_DAYS * 86_400_000),
    // A used or expired link is kept a day (so a second click says "used", not "unknown"), then goes.
    db.prepare("DELETE FROM account_tokens WHERE expires_at < ?").bind(now - 86_400_000),
  ]);
  const next = await db
    .prepare("SELECT MIN(next_attempt_at) AS at FROM mail_outbox WHERE status = 'pending'")
    .first<{ at: number | null }>();
  return next?.at ?? null;
}
