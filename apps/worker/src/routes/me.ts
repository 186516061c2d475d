import {
  AppError,
  changePasswordSchema,
  deleteAccountSchema,
  erasureRecordSchema,
  type Me,
  meSchema,
  type Role,
  updateMeSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import { endTokens } from "../auth/account-tokens.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { hashPassword, verifyPassword } from "../auth/password.ts";
import { iso } from "../db/pagination.ts";
import { fileErasure, toErasureRequest } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { jsonBody } from "../http/validate.ts";
import { grantWaits, resetPage } from "../mail/account-mail.ts";
import { queueMailStatement, sendQueuedMail } from "../mail/outbox.ts";
import { clearRefreshCookie } from "./auth.ts";

/**
 * Checks the caller's current password before a change that could take the account over (its
 * email, its password). Counted like sign-in guesses, per account: a stolen access token is not a
 * way to guess the password faster than the login form allows.
 */
export async function requirePassword(
  env: Env,
  userId: string,
  typed: string,
  field = "currentPassword",
): Promise<void> {
  // The sign-in form's limit for one client (10 a minute), here per account: the per-email
  // limiter allows 100, which is for guesses spread over many addresses, not one token's.
  const limit = await env.LOGIN_RATE_LIMITER.limit({
    key: await keyedHash(env.ERASURE_HASH_KEY, "password-check", userId),
  });
  if (!limit.success) {
    throw new AppError("rate_limited", "Too many password attempts; try again in a minute");
  }
  const row = await env.DB.prepare("SELECT password_hash FROM users WHERE id = ?")
    .bind(userId)
    .first<{ password_hash: string }>();
  if (!row || !(await verifyPassword(typed, row.password_hash))) {
    throw new AppError("forbidden", "The current password is not right", { field });
  }
}

/** The caller as `GET /api/me` answers: who they are and their orgs with their roles. */
async function meOf(env: Env, userId: string): Promise<Me> {
  const db = env.DB;
  const [users, orgs] = await db.batch([
    db
      .prepare("SELECT id, email, name, created_at, email_verified_at FROM users WHERE id = ?")
      .bind(userId),
    db
      .prepare(
        `SELECT o.id, o.name, m.role, o.created_at FROM memberships m
         JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ? ORDER BY o.id`,
      )
      .bind(userId),
  ]);
  const user = users?.results[0] as
    | {
        id: string;
        email: string;
        name: string;
        created_at: number;
        email_verified_at: number | null;
      }
    | undefined;
  if (!user) throw new AppError("unauthorized", "Invalid or expired access token");
  const rows = (orgs?.results ?? []) as {
    id: string;
    name: string;
    role: Role;
    created_at: number;
  }[];
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    createdAt: iso(user.created_at),
    emailVerified: user.email_verified_at !== null,
    signupGrantWaits:
      user.email_verified_at === null && (await grantWaits(env, user.id, user.email)),
    orgs: rows.map((org) => ({
      id: org.id,
      name: org.name,
      role: org.role,
      createdAt: iso(org.created_at),
    })),
  };
}

export const me = new Hono<AppEnv>()
  .get(
    "/",
    describeRoute({
      tags: ["Me"],
      summary: "The caller and their orgs",
      responses: { 200: json(meSchema), ...errors(401) },
    }),
    async (c) => c.json(await meOf(c.env, c.get("caller").userId)),
  )

  /**
   * Changes the caller's display name (2026-12-02). The email no longer changes here
   * (2026-12-06): a new address must prove itself first, through `POST /api/me/email` and the link
   * it mails (routes/me-mail.ts); `email` is taken only when it is the current one (a no-op).
   * Answers the caller as `GET /api/me` does.
   */
  .patch(
    "/",
    describeRoute({
      tags: ["Me"],
      summary: "Change one's name",
      description:
        "A different `email` is refused (400): change it with `POST /api/me/email`, which verifies the new address first.",
      responses: { 200: json(meSchema), ...errors(400, 401, 403, 429) },
    }),
    jsonBody(updateMeSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const input = c.req.valid("json");
      if (input.email !== undefined) {
        const current = await db
          .prepare("SELECT email FROM users WHERE id = ?")
          .bind(userId)
          .first<{ email: string }>();
        if (input.email !== current?.email) {
          throw new AppError(
            "invalid_request",
            "Change your email with POST /api/me/email: the new address confirms it by a link first",
            { field: "email" },
          );
        }
      }
      await db
        .prepare("UPDATE users SET name = COALESCE(?, name) WHERE id = ?")
        .bind(input.name ?? null, userId)
        .run();
      return c.json(await meOf(c.env, userId));
    },
  )

  /**
   * Changes the caller's password (2026-12-02): the current one first, the new one by the sign-up
   * rules. Every other sign-in of the account ends (their refresh cookies, access tokens and open
   * sockets): whoever knew the old password is out. This sign-in stays.
   */
  .post(
    "/password",
    describeRoute({
      tags: ["Me"],
      summary: "Change one's password (ends every other sign-in)",
      responses: { 204: empty(), ...errors(401, 403, 429) },
    }),
    jsonBody(changePasswordSchema),
    async (c) => {
      const caller = c.get("caller");
      const db = c.env.DB;
      const input = c.req.valid("json");
      await requirePassword(c.env, caller.userId, input.currentPassword);
      const now = Date.now();
      const user = await db
        .prepare("SELECT email, name, email_verified_at FROM users WHERE id = ?")
        .bind(caller.userId)
        .first<{ email: string; name: string; email_verified_at: number | null }>();
      // A notice to a proven address only (an unverified one may be someone else's).
      const notice =
        user && user.email_verified_at !== null
          ? [
              await queueMailStatement(
                c.env,
                {
                  kind: "password_changed",
                  to: user.email,
                  userId: caller.userId,
                  data: { name: user.name, resetLink: resetPage(publicBase(c, "Mail")) },
                },
                { now },
              ),
            ]
          : [];
      const { results: others } = await db
        .prepare(
          "SELECT DISTINCT family_id FROM refresh_tokens WHERE user_id = ? AND family_id <> ? AND revoked_at IS NULL",
        )
        .bind(caller.userId, caller.familyId)
        .all<{ family_id: string }>();
      await db.batch([
        db
          .prepare("UPDATE users SET password_hash = ? WHERE id = ?")
          .bind(await hashPassword(input.newPassword), caller.userId),
        db
          .prepare(
            "UPDATE refresh_tokens SET revoked_at = ?, successor_sealed = NULL WHERE user_id = ? AND family_id <> ? AND revoked_at IS NULL",
          )
          .bind(now, caller.userId, caller.familyId),
        // Links the old password's holder may have asked for end with it: a reset, an email change.
        endTokens(db, caller.userId, ["reset_password", "change_email"], now),
        ...notice,
      ]);
      if (notice.length > 0) sendQueuedMail(c.env, c.executionCtx);
      for (const { family_id } of others) await revokeConnections(c.env, { familyId: family_id });
      return c.body(null, 204);
    },
  )

  /**
   * Self-erasure of the whole account (GDPR Art. 17). Every org membership goes, the member's usage
   * identity is pseudonymized, and an org the user alone belongs to is erased with them. An org they
   * own together with other members is not theirs alone to erase: the request is refused until they
   * hand over ownership or remove the others.
   */
  .delete(
    "/",
    describeRoute({
      tags: ["Me"],
      summary: "Erase one's own account",
      responses: { 202: json(erasureRecordSchema, "Erasure filed"), ...errors(401) },
    }),
    jsonBody(deleteAccountSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { results: memberships } = await db
        .prepare(
          `SELECT m.org_id, m.role, o.name,
           (SELECT COUNT(*) FROM memberships x WHERE x.org_id = m.org_id) AS members,
           (SELECT COUNT(*) FROM memberships x WHERE x.org_id = m.org_id AND x.role = 'owner') AS owners
         FROM memberships m JOIN organizations o ON o.id = m.org_id WHERE m.user_id = ?`,
        )
        .bind(userId)
        .all<{ org_id: string; role: Role; name: string; members: number; owners: number }>();
      const account = await db
        .prepare("SELECT email FROM users WHERE id = ?")
        .bind(userId)
        .first<{ email: string }>();
      const plan = {
        userId,
        email: account?.email ?? null,
        orgIds: memberships.map((m) => m.org_id),
        projectIds: [] as string[],
        sessionIds: [] as string[],
        deleteOrgIds: [] as string[],
        membershipOrgId: null,
      };
      for (const m of memberships) {
        if (m.role === "owner" && m.owners === 1 && m.members > 1) {
          throw new AppError(
            "conflict",
            `You are the only owner of "${m.name}", which has other members: make one of them an owner first`,
          );
        }
        if (m.members === 1) {
          plan.deleteOrgIds.push(m.org_id);
          const { results: projects } = await db
            .prepare("SELECT id FROM projects WHERE org_id = ?")
            .bind(m.org_id)
            .all<{ id: string }>();
          plan.projectIds.push(...projects.map((p) => p.id));
          const { results: sessions } = await db
            .prepare("SELECT id FROM sessions WHERE org_id = ?")
            .bind(m.org_id)
            .all<{ id: string }>();
          plan.sessionIds.push(...sessions.map((s) => s.id));
        } else {
          const { results: sessions } = await db
            .prepare("SELECT id FROM sessions WHERE org_id = ? AND owner_id = ?")
            .bind(m.org_id, userId)
            .all<{ id: string }>();
          plan.sessionIds.push(...sessions.map((s) => s.id));
        }
      }
      // The used shared chats of the orgs that live on (an org erased whole takes its chats along):
      // their messages go, and others' messages naming them are scrubbed.
      const { results: chats } = await db
        .prepare(
          `SELECT DISTINCT p.project_id FROM preview_authors p
         JOIN memberships m ON m.org_id = p.org_id AND m.user_id = ?`,
        )
        .bind(userId)
        .all<{ project_id: string }>();
      const chatProjectIds = chats
        .map((row) => row.project_id)
        .filter((id) => !plan.projectIds.includes(id));
      const request = await fileErasure(c.env, {
        requestedBy: userId,
        orgId: null,
        subject: { type: "account", id: userId },
        reason: "account deletion by its owner",
        plan: { ...plan, chatProjectIds },
      });
      clearRefreshCookie(c);
      return c.json(toErasureRequest(request), 202);
    },
  );
