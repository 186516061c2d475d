import {
  AppError,
  acceptedSchema,
  changeEmailSchema,
  type Notifications,
  notificationsSchema,
  orgNotificationsSchema,
  type Role,
  updateNotificationsSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { orgAccess } from "../auth/access.ts";
import { issueToken } from "../auth/account-tokens.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { jsonBody, noBody } from "../http/validate.ts";
import { grantWaits, resetPage, verificationMail } from "../mail/account-mail.ts";
import { queueMailStatement, sendQueuedMail } from "../mail/outbox.ts";
import { maskedEmail } from "../mail/templates.ts";
import { requirePassword } from "./me.ts";

/**
 * The signed-in person's mail (docs/2026-12-06-mail.md): a new verification link, moving the
 * account to a new address (verified there first, with a notice to the old one), and the billing
 * mail an owner opts into per org.
 */

/** Mail a person asks for themselves, per account: a stolen token is not a way to send mail. */
async function limitAccountMail(c: Context<AppEnv>, userId: string): Promise<void> {
  const { success } = await c.env.ACCOUNT_MAIL_RATE_LIMITER.limit({
    key: await keyedHash(c.env.ERASURE_HASH_KEY, "account-mail", userId),
  });
  if (!success)
    throw new AppError("rate_limited", "Too many mails asked for; try again in a minute");
}

async function account(db: D1Database, userId: string) {
  const row = await db
    .prepare("SELECT email, name, email_verified_at FROM users WHERE id = ?")
    .bind(userId)
    .first<{ email: string; name: string; email_verified_at: number | null }>();
  if (!row) throw new AppError("unauthorized", "Invalid or expired access token");
  return row;
}

interface NotificationRow {
  org_id: string;
  name: string;
  role: Role;
  mail_receipts: number;
  mail_limit_alerts: number;
}

const toNotifications = (row: NotificationRow) => ({
  orgId: row.org_id,
  orgName: row.name,
  role: row.role,
  receipts: row.role === "owner" && row.mail_receipts === 1,
  limitAlerts: row.role === "owner" && row.mail_limit_alerts === 1,
  available: row.role === "owner",
});

const NOTIFICATION_COLUMNS = "m.org_id, o.name, m.role, m.mail_receipts, m.mail_limit_alerts";

export const meMail = new Hono<AppEnv>()
  .post(
    "/email-verification",
    describeRoute({
      tags: ["Me"],
      summary: "Mail a new verification link",
      description: "The older links stop working. 409 when the address is verified already.",
      responses: { 202: json(acceptedSchema, "Mailed"), ...errors(401, 409, 429) },
    }),
    noBody,
    async (c) => {
      const { userId } = c.get("caller");
      const user = await account(c.env.DB, userId);
      if (user.email_verified_at !== null) {
        throw new AppError("conflict", "Your email address is verified already");
      }
      await limitAccountMail(c, userId);
      const now = Date.now();
      const grant = await grantWaits(c.env, userId, user.email);
      await c.env.DB.batch(
        await verificationMail(c, {
          userId,
          name: user.name,
          email: user.email,
          now,
          grantWaits: grant,
        }),
      );
      sendQueuedMail(c.env, c.executionCtx);
      return c.json({ accepted: true as const }, 202);
    },
  )

  /**
   * Moves the account to a new address, once that address proves itself: a link goes there, a
   * notice to the old address (when it was verified: an unproven one may not be theirs). An
   * address another account has gets, instead of a link, a mail saying so; the answer is the same
   * either way, so this tells the caller nothing about who has an account.
   */
  .post(
    "/email",
    describeRoute({
      tags: ["Me"],
      summary: "Change one's email (verified at the new address first)",
      description:
        "202 with the same body whether or not another account has the address. The change happens when the link mailed to the new address is used (`POST /api/auth/verify-email`).",
      responses: { 202: json(acceptedSchema, "Mailed"), ...errors(400, 401, 403, 429) },
    }),
    jsonBody(changeEmailSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { newEmail, password } = c.req.valid("json");
      await requirePassword(c.env, userId, password, "password");
      const user = await account(db, userId);
      if (newEmail === user.email) {
        throw new AppError("invalid_request", "This is your address already", {
          field: "newEmail",
        });
      }
      await limitAccountMail(c, userId);
      const base = publicBase(c, "Email change");
      const now = Date.now();
      const taken = await db
        .prepare("SELECT 1 AS t FROM users WHERE email = ? AND id <> ?")
        .bind(newEmail, userId)
        .first();
      const statements: D1PreparedStatement[] = [];
      if (taken) {
        statements.push(
          await queueMailStatement(
            c.env,
            { kind: "email_taken", to: newEmail, data: { resetLink: resetPage(base) } },
            { now },
          ),
        );
      } else {
        const issued = await issueToken(db, {
          userId,
          purpose: "change_email",
          email: newEmail,
          now,
        });
        statements.push(
          ...issued.statements,
          await queueMailStatement(
            c.env,
            {
              kind: "email_change",
              to: newEmail,
              userId,
              data: {
                name: user.name,
                link: `${base}/verify-email#${issued.token}`,
                expiresAt: issued.expiresAt,
              },
            },
            { now },
          ),
        );
      }
      // The notice goes either way, so the old address learns of every attempt.
      if (user.email_verified_at !== null) {
        statements.push(
          await queueMailStatement(
            c.env,
            {
              kind: "email_change_notice",
              to: user.email,
              userId,
              data: {
                name: user.name,
                newEmail: maskedEmail(newEmail),
                resetLink: resetPage(base),
              },
            },
            { now },
          ),
        );
      }
      await db.batch(statements);
      sendQueuedMail(c.env, c.executionCtx);
      return c.json({ accepted: true as const }, 202);
    },
  )

  .get(
    "/notifications",
    describeRoute({
      tags: ["Me"],
      summary: "One's billing mail, per org",
      responses: { 200: json(notificationsSchema), ...errors(401) },
    }),
    async (c) => {
      const { results } = await c.env.DB.prepare(
        `SELECT ${NOTIFICATION_COLUMNS} FROM memberships m JOIN organizations o ON o.id = m.org_id
         WHERE m.user_id = ? ORDER BY m.org_id`,
      )
        .bind(c.get("caller").userId)
        .all<NotificationRow>();
      return c.json({ items: results.map(toNotifications) } satisfies Notifications);
    },
  )

  /** An owner switches an org's receipts and limit alerts by mail on or off. */
  .patch(
    "/notifications/:orgId",
    describeRoute({
      tags: ["Me"],
      summary: "Switch an org's billing mail (owners)",
      responses: { 200: json(orgNotificationsSchema), ...errors(400, 401, 403, 404) },
    }),
    jsonBody(updateNotificationsSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      if (access.role !== "owner") {
        throw new AppError("forbidden", "Only owners get billing mail");
      }
      const input = c.req.valid("json");
      const toFlag = (value: boolean | undefined) => (value === undefined ? null : value ? 1 : 0);
      await db
        .prepare(
          `UPDATE memberships SET mail_receipts = COALESCE(?, mail_receipts),
             mail_limit_alerts = COALESCE(?, mail_limit_alerts)
           WHERE org_id = ? AND user_id = ? AND role = 'owner'`,
        )
        .bind(toFlag(input.receipts), toFlag(input.limitAlerts), access.orgId, userId)
        .run();
      const row = await db
        .prepare(
          `SELECT ${NOTIFICATION_COLUMNS} FROM memberships m JOIN organizations o ON o.id = m.org_id
           WHERE m.org_id = ? AND m.user_id = ?`,
        )
        .bind(access.orgId, userId)
        .first<NotificationRow>();
      if (!row) throw new AppError("not_found", "Organization not found");
      return c.json(toNotifications(row));
    },
  );
