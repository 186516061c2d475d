import {
  AppError,
  acceptedInvitationSchema,
  type InvitationPreview,
  invitationPreviewSchema,
  invitationTokenSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound } from "../auth/access.ts";
import { auditStatement } from "../db/audit.ts";
import { iso } from "../db/pagination.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { deprecatedForm } from "../http/deprecated.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody, noBody } from "../http/validate.ts";
import { invitationMailKey } from "../mail/invitation-mail.ts";
import { byToken, MAKER_STANDS, pendingInvitations, requireUsable } from "./invitations.ts";

/**
 * What an invitation link's reader does with its secret: read what it invites to, and accept it.
 *
 * The secret travels in the request body (`{ "token": ... }`) and in the link's fragment
 * (`/invite#inv_...`), which browsers never send: request logs (Cloudflare's, `wrangler dev`'s)
 * and proxies keep paths and queries, and a secret there is readable by anyone who reads them.
 * The first forms, with the secret in the path, still answer for clients and links made before
 * 2026-12-04, marked deprecated, until `INVITATION_PATH_FORMS_END` (default 2026-12-18), and 410
 * after it (docs/2026-12-04-invitation-secrets.md).
 */

/** What a link invites to, before its reader has signed in (so they sign up with the right email). */
async function preview(c: Context<AppEnv>, token: string) {
  const row = await byToken(c.env.DB, token);
  if (!row) throw notFound("Invitation");
  requireUsable(row, Date.now());
  return c.json({
    orgName: row.org_name,
    email: row.email,
    role: row.role,
    expiresAt: iso(row.expires_at),
  } satisfies InvitationPreview);
}

/** The signed-in invitee joins the org with the role. */
async function accept(c: Context<AppEnv>, token: string) {
  const { userId } = c.get("caller");
  const db = c.env.DB;
  const row = await byToken(db, token);
  if (!row) throw notFound("Invitation");
  const now = Date.now();
  requireUsable(row, now);
  const user = await db
    .prepare("SELECT email FROM users WHERE id = ?")
    .bind(userId)
    .first<{ email: string }>();
  // The invited address exactly (case aside): `+tags` and Gmail's dots name other mailboxes to
  // anyone but Gmail, and even there a look-alike is no proof of being the person invited.
  if (!user || user.email.trim().toLowerCase() !== row.email.trim().toLowerCase()) {
    throw new AppError(
      "forbidden",
      "This invitation is for another email address: sign in with the invited one",
    );
  }
  const already = await db
    .prepare("SELECT 1 AS m FROM memberships WHERE org_id = ? AND user_id = ?")
    .bind(row.org_id, userId)
    .first();
  if (already) throw new AppError("conflict", "You are already a member of this organization");
  // The person's other links to this org go with this one: none is left to come back by later.
  const others = (await pendingInvitations(db, row.org_id, { email: row.email }, now)).filter(
    (id) => id !== row.id,
  );
  // One statement takes the invitation, so two accepts racing with one link add one membership.
  const [taken, joined] = await db.batch([
    db
      .prepare(
        // Its maker's standing too, as the statement runs: a removal racing the accept either
        // comes first (nothing taken) or after (the member joined while the link was good).
        `UPDATE invitations AS i SET accepted_at = ?1, accepted_by = ?2
         WHERE i.id = ?3 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > ?1
           AND ${MAKER_STANDS}`,
      )
      .bind(now, userId, row.id),
    db
      .prepare(
        `INSERT INTO memberships (org_id, user_id, role, created_at)
         SELECT ?1, ?2, ?3, ?4 WHERE changes() = 1
         ON CONFLICT (org_id, user_id) DO NOTHING`,
      )
      .bind(row.org_id, userId, row.role, now),
    auditStatement(
      db,
      {
        orgId: row.org_id,
        actorId: userId,
        action: "member.added",
        subjectType: "user",
        subjectId: userId,
        data: { role: row.role, invitation: row.id },
      },
      { now, afterChange: true },
    ),
    // Only when this accept took the invitation: a refused accept changes nothing.
    db
      .prepare(
        `UPDATE invitations SET revoked_at = ?1 WHERE id IN (SELECT value FROM json_each(?2))
         AND accepted_at IS NULL AND revoked_at IS NULL
         AND EXISTS (SELECT 1 FROM invitations WHERE id = ?3 AND accepted_at = ?1 AND accepted_by = ?4)`,
      )
      .bind(now, JSON.stringify(others), row.id, userId),
    // Joining through the link MAILED to the invited address proves the address, as the
    // verification mail's link would (the outside probe: Raj joined from his mailbox and was
    // still asked to confirm it). Only once the outbox has sent that mail: a link the inviter
    // copied and handed over themselves (not mailed: an unverified inviter, or past their mail
    // limit) proves nothing about the mailbox. The inviter also saw the link, so an inviter could
    // take an address they mailed; they are a verified, rate-limited member of the org, and the
    // address's owner still recovers the account by mail (docs/2026-12-06-web-ux-probe-fixes.md).
    db
      .prepare(
        `UPDATE users SET email_verified_at = ?1
         WHERE id = ?2 AND email_verified_at IS NULL
           AND EXISTS (SELECT 1 FROM invitations WHERE id = ?3 AND accepted_at = ?1 AND accepted_by = ?2)
           AND EXISTS (SELECT 1 FROM mail_outbox WHERE dedupe_key = ?4 AND kind = 'invitation' AND status = 'sent')`,
      )
      .bind(now, userId, row.id, invitationMailKey(row.id)),
  ]);
  if (taken?.meta.changes !== 1)
    throw new AppError("gone", "This invitation can no longer be used");
  if (joined?.meta.changes !== 1) {
    throw new AppError("conflict", "You are already a member of this organization");
  }
  return c.json({ orgId: row.org_id, role: row.role }, 201);
}

const PATH_FORM =
  "Deprecated: the secret in the path is kept by request logs. Send it in the body instead. " +
  "Answers until INVITATION_PATH_FORMS_END (default 2026-12-18, UTC), then 410 `gone`.";

/** The path forms' deprecation: `Deprecation`, `Sunset`, and 410 once they ended. */
const pathForm = (c: Context<AppEnv>, successor: string) =>
  deprecatedForm(c, {
    deprecatedAt: "2026-12-04",
    endsAt: config(c.env).pathFormsEnd.invitationSecret,
    successor,
  });

/**
 * `POST /api/auth/invitations/preview` (`{ token }`): public, like the rest of `/api/auth`; the
 * secret is the credential, 256 random bits. `GET /api/auth/invitations/:token` is its first form.
 */
export const invitationPreview = new Hono<AppEnv>()
  .post(
    "/preview",
    describeRoute({
      tags: ["Invitations"],
      summary: "What an invitation link shows (public)",
      security: security.public,
      responses: { 200: json(invitationPreviewSchema), ...errors(400, 404, 410) },
    }),
    jsonBody(invitationTokenSchema),
    (c) => preview(c, c.req.valid("json").token),
  )
  .get(
    "/:token",
    describeRoute({
      tags: ["Invitations"],
      summary: "What an invitation link shows (public; deprecated form)",
      description: PATH_FORM,
      deprecated: true,
      security: security.public,
      responses: { 200: json(invitationPreviewSchema), ...errors(404, 410) },
    }),
    (c) => {
      pathForm(c, "/api/auth/invitations/preview");
      return preview(c, c.req.param("token"));
    },
  );

/** `POST /api/invitations/accept` (`{ token }`); `POST /api/invitations/:token/accept` is its first form. */
export const invitations = new Hono<AppEnv>()
  .post(
    "/accept",
    describeRoute({
      tags: ["Invitations"],
      summary: "Accept an invitation",
      responses: { 201: json(acceptedInvitationSchema), ...errors(400, 401, 403, 404, 409, 410) },
    }),
    jsonBody(invitationTokenSchema),
    (c) => accept(c, c.req.valid("json").token),
  )
  .post(
    "/:token/accept",
    describeRoute({
      tags: ["Invitations"],
      summary: "Accept an invitation (deprecated form)",
      description: PATH_FORM,
      deprecated: true,
      responses: { 201: json(acceptedInvitationSchema), ...errors(401, 403, 404, 409, 410) },
    }),
    noBody,
    (c) => {
      pathForm(c, "/api/invitations/accept");
      return accept(c, c.req.param("token"));
    },
  );
