import {
  AppError,
  acceptedSchema,
  passwordResetConfirmSchema,
  passwordResetRequestSchema,
  type VerifiedEmail,
  verifiedEmailSchema,
  verifyEmailSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import {
  consume,
  endTokens,
  issueToken,
  type LiveToken,
  linkGone,
  liveToken,
  whenConsumed,
} from "../auth/account-tokens.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { hashPassword } from "../auth/password.ts";
import { openBillingAccount } from "../billing/account.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json, security } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { sameOriginOnly } from "../http/same-origin.ts";
import { jsonBody } from "../http/validate.ts";
import { grantedOrg, grantStatement, resetPage } from "../mail/account-mail.ts";
import { mailOutbox, queueMailStatement, sendQueuedMail } from "../mail/outbox.ts";
import { clearRefreshCookie, clientKey } from "./auth.ts";

/**
 * Getting back into an account, and proving its address (docs/2026-12-06-mail.md): a password
 * reset by mail, and the links mailed to verify an address. No sign-in needed: the link's secret
 * is the proof. Every link is single-use, short-lived, stored hashed, and a link that cannot be
 * used (used, expired, superseded, unknown) answers `gone` and changes nothing.
 */

/** Reset mails one account gets in an hour at most, whoever asks (beyond: silently none). */
const RESETS_PER_HOUR = 5;

/**
 * How long the reset's work waits after the answer: long enough that the answer has left even
 * when one thread serves everything, short next to a mail's delivery.
 */
const RESET_START_DELAY_MS = 200;
const afterTheAnswer = () =>
  new Promise<void>((resolve) => setTimeout(resolve, RESET_START_DELAY_MS));

/** A user a reset may go to: not erased, nor being erased. */
interface ResetUser {
  id: string;
  name: string;
  email: string;
}

/**
 * After the answer: finds the account, issues its link and queues the mail. Out of the request's
 * path so that a known address and an unknown one take the same time to answer; a failure here is
 * logged (never the address) and the person asks again.
 */
async function startReset(env: Env, email: string, base: string): Promise<void> {
  const db = env.DB;
  const now = Date.now();
  const user = await db
    .prepare(
      `SELECT u.id, u.name, u.email FROM users u WHERE u.email = ?
       AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = u.id)`,
    )
    .bind(email)
    .first<ResetUser>();
  if (!user) return;
  const recent = await db
    .prepare(
      "SELECT COUNT(*) AS n FROM mail_outbox WHERE user_id = ? AND kind = 'password_reset' AND created_at > ?",
    )
    .bind(user.id, now - 3_600_000)
    .first<{ n: number }>();
  if ((recent?.n ?? 0) >= RESETS_PER_HOUR) return;
  const issued = await issueToken(db, {
    userId: user.id,
    purpose: "reset_password",
    email: user.email,
    now,
  });
  await db.batch([
    ...issued.statements,
    await queueMailStatement(
      env,
      {
        kind: "password_reset",
        to: user.email,
        userId: user.id,
        data: {
          name: user.name,
          link: `${base}/reset-password#${issued.token}`,
          expiresAt: issued.expiresAt,
        },
      },
      { now },
    ),
  ]);
  await mailOutbox(env).kick();
}

/** The account a live link names, if its address is still the one the link was mailed to. */
async function linkedUser(
  db: D1Database,
  live: LiveToken,
): Promise<{ email: string; name: string; verified: boolean }> {
  const user = await db
    .prepare(
      `SELECT email, name, email_verified_at FROM users u WHERE u.id = ?
       AND NOT EXISTS (SELECT 1 FROM tombstones WHERE subject_id = u.id)`,
    )
    .bind(live.userId)
    .first<{ email: string; name: string; email_verified_at: number | null }>();
  // A link mailed to an address the account has since left proves nothing about it now.
  if (!user || (live.purpose !== "change_email" && user.email !== live.email)) throw linkGone();
  return { email: user.email, name: user.name, verified: user.email_verified_at !== null };
}

/** Opens the org this verification gave the sign-up grant to, so the grant is posted now. */
/** Posts the grant this verification recorded, if it recorded one; says whether it did. */
async function postGrant(env: Env, userId: string, now: number): Promise<boolean> {
  const orgId = await grantedOrg(env, userId, now);
  // Posted by any later read of the org's billing too: the row names the org (billing/account.ts).
  if (orgId) await openBillingAccount(env, orgId).catch(() => undefined);
  return orgId !== null;
}

export const accountRecovery = new Hono<AppEnv>()
  .use("*", sameOriginOnly)
  .post(
    "/password-reset",
    describeRoute({
      tags: ["Auth"],
      summary: "Ask for a password reset link by mail",
      description:
        "Answers 202 with the same body whether or not an account has the address; the link (30 minutes, single use) goes to the address only.",
      security: security.public,
      responses: { 202: json(acceptedSchema, "Taken"), ...errors(429) },
    }),
    jsonBody(passwordResetRequestSchema),
    async (c) => {
      const { email } = c.req.valid("json");
      // Both limits count before the address is looked up: an unknown address is limited exactly
      // like a known one, so a 429 tells nothing either.
      const tooMany = () =>
        new AppError("rate_limited", "Too many reset requests; try again in a minute");
      const perClient = await c.env.PASSWORD_RESET_RATE_LIMITER.limit({
        key: await clientKey(c, "reset-rate"),
      });
      if (!perClient.success) throw tooMany();
      const perAddress = await c.env.PASSWORD_RESET_EMAIL_RATE_LIMITER.limit({
        key: await keyedHash(c.env.ERASURE_HASH_KEY, "reset-email-rate", email),
      });
      if (!perAddress.success) throw tooMany();
      const base = publicBase(c, "Password reset");
      // Started only once the answer is out: in one thread (workerd under `pnpm dev` runs every
      // isolate, Durable Object and local D1 on one) the known address's work, begun at once,
      // delayed the answer itself: 134 ms against 71 for an unknown address over six pairs (the
      // probe of 2026-12-06). The mail leaves a moment later; nobody waits for it.
      c.executionCtx.waitUntil(
        afterTheAnswer()
          .then(() => startReset(c.env, email, base))
          .catch(() =>
            console.error(
              JSON.stringify({ level: "error", source: "mail", outcome: "reset_not_queued" }),
            ),
          ),
      );
      return c.json({ accepted: true as const }, 202);
    },
  )

  .post(
    "/password-reset/confirm",
    describeRoute({
      tags: ["Auth"],
      summary: "Set a new password with a reset link",
      description:
        "Uses the link once: the password changes, every sign-in of the account ends (refresh tokens, access tokens through the token version, open sockets) and the address counts as verified. A used, expired or superseded link is 410 and changes nothing.",
      security: security.public,
      responses: { 204: empty("Password set; sign in again"), ...errors(400, 410) },
    }),
    jsonBody(passwordResetConfirmSchema),
    async (c) => {
      const { token, password } = c.req.valid("json");
      const db = c.env.DB;
      const now = Date.now();
      const live = await liveToken(db, token, ["reset_password"], now);
      const user = await linkedUser(db, live);
      const gate = whenConsumed(live);
      const passwordHash = await hashPassword(password);
      const base = publicBase(c, "Password reset");
      const [used] = await db.batch([
        consume(db, live, now),
        // Proving the mailbox proves the address: an unverified account verifies here, and its
        // sign-up grant goes out (before the statement that marks it verified).
        await grantStatement(c.env, { userId: live.userId, email: user.email, now, gate }),
        db
          .prepare(
            `UPDATE users SET password_hash = ?, token_version = token_version + 1,
               email_verified_at = COALESCE(email_verified_at, ?)
             WHERE id = ? AND ${gate.sql}`,
          )
          .bind(passwordHash, now, live.userId, ...gate.bindings),
        db
          .prepare(
            `UPDATE refresh_tokens SET revoked_at = ?, successor_sealed = NULL
             WHERE user_id = ? AND revoked_at IS NULL AND ${gate.sql}`,
          )
          .bind(now, live.userId, ...gate.bindings),
        db
          .prepare(`DELETE FROM connect_tickets WHERE user_id = ? AND ${gate.sql}`)
          .bind(live.userId, ...gate.bindings),
        // Whatever else was pending for the account ends with the old password: an email change
        // an intruder asked for, other reset or verification links.
        endTokens(db, live.userId, ["reset_password", "change_email", "verify_email"], now, gate),
        await queueMailStatement(
          c.env,
          {
            kind: "password_changed",
            to: user.email,
            userId: live.userId,
            data: { name: user.name, resetLink: resetPage(base) },
          },
          { now, onlyIf: gate },
        ),
      ]);
      if (used?.meta.changes !== 1) throw linkGone();
      sendQueuedMail(c.env, c.executionCtx);
      // Every sign-in ended above; what their tokens opened closes now.
      await revokeConnections(c.env, { userId: live.userId });
      if (!user.verified) await postGrant(c.env, live.userId, now);
      clearRefreshCookie(c);
      return c.body(null, 204);
    },
  )

  .post(
    "/verify-email",
    describeRoute({
      tags: ["Auth"],
      summary: "Use a verification link",
      description:
        "A sign-up's link (`vfy_`) marks the address verified and gives the sign-up grant; an email change's (`eml_`) makes the new address the account's. Single use; a used, expired or superseded link is 410 and changes nothing; an address another account took meanwhile is 409.",
      security: security.public,
      responses: { 200: json(verifiedEmailSchema), ...errors(400, 409, 410) },
    }),
    jsonBody(verifyEmailSchema),
    async (c) => {
      const { token } = c.req.valid("json");
      const db = c.env.DB;
      const now = Date.now();
      const live = await liveToken(db, token, ["verify_email", "change_email"], now);
      const user = await linkedUser(db, live);
      const gate = whenConsumed(live);
      const changing = live.purpose === "change_email";
      const statements = [
        consume(db, live, now),
        await grantStatement(c.env, { userId: live.userId, email: live.email, now, gate }),
        db
          .prepare(
            `UPDATE users SET email = ?, email_verified_at = COALESCE(?, email_verified_at, ?)
             WHERE id = ? AND ${gate.sql}`,
          )
          // A new address is verified now; a sign-up's keeps the first time it was.
          .bind(live.email, changing ? now : null, now, live.userId, ...gate.bindings),
      ];
      // The account's other links were mailed to the old address, or for it: they end.
      if (changing) {
        statements.push(
          endTokens(db, live.userId, ["verify_email", "change_email", "reset_password"], now, gate),
        );
      }
      let used: D1Result | undefined;
      try {
        [used] = await db.batch(statements);
      } catch (error) {
        // Taken by another account since the link was mailed: nothing was written (one batch).
        if (/UNIQUE/i.test(String(error))) {
          throw new AppError("conflict", "Another account has this address now", {
            field: "email",
          });
        }
        throw error;
      }
      if (used?.meta.changes !== 1) throw linkGone();
      const signupGrant = !user.verified && (await postGrant(c.env, live.userId, now));
      return c.json({ email: live.email, changed: changing, signupGrant } satisfies VerifiedEmail);
    },
  );
