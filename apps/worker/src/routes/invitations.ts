import {
  type AddMember,
  AppError,
  type CreateInvitation,
  createInvitationSchema,
  type Invitation,
  invitationPageSchema,
  invitationSchema,
  isId,
  newId,
  pageQuerySchema,
  type Role,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { notFound, orgAccess, requireRole } from "../auth/access.ts";
import { sha256Base64Url, toBase64Url } from "../auth/encoding.ts";
import { normalizedEmail } from "../auth/keyed-hash.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage, iso } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { publicBase } from "../http/public-base.ts";
import { jsonBody, query } from "../http/validate.ts";
import { invitationMail } from "../mail/invitation-mail.ts";
import { sendQueuedMail } from "../mail/outbox.ts";

/**
 * Invitations (2026-12-02). An owner or admin invites an email with a role and gets a link to send
 * them (Parley sends no mail); the person joins by accepting it, whether they had an account or make
 * one through the link. Adding a member by email is the same invitation: nobody joins unasked.
 * The link's secret is stored only as its SHA-256, so a leaked database opens no org. It is
 * accepted once, within {@link INVITATION_TTL_MS}, by a signed-in user whose email is the one
 * invited (exactly, case aside): a forwarded link does not let another account in.
 */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface InvitationRow {
  id: string;
  org_id: string;
  email: string;
  role: Role;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  revoked_at: number | null;
}

const statusOf = (row: InvitationRow, now: number): Invitation["status"] =>
  row.accepted_at !== null
    ? "accepted"
    : row.revoked_at !== null
      ? "revoked"
      : row.expires_at <= now
        ? "expired"
        : "pending";

const toInvitation = (row: InvitationRow, now = Date.now()): Invitation => ({
  id: row.id,
  orgId: row.org_id,
  email: row.email,
  role: row.role,
  status: statusOf(row, now),
  createdAt: iso(row.created_at),
  expiresAt: iso(row.expires_at),
});

const COLUMNS = "id, org_id, email, role, created_at, expires_at, accepted_at, revoked_at";

/** An invitation as its link finds it: with its org's name and whether its maker still stands. */
export type LinkedInvitation = InvitationRow & { org_name: string; maker_stands: number };

/**
 * SQL true while the maker of invitation `i` may still grant what it invites to: a member of its
 * org with the role that makes such a link (an owner for the owner role, else an owner or admin),
 * with no erasure filed of them or of the org. An erased maker's `invited_by` is NULL: false.
 */
export const MAKER_STANDS = `EXISTS (
  SELECT 1 FROM memberships m WHERE m.org_id = i.org_id AND m.user_id = i.invited_by
    AND m.role IN ('owner', CASE WHEN i.role = 'owner' THEN 'owner' ELSE 'admin' END)
    AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (i.invited_by, i.org_id)))`;

/** The invitation a link's secret names, or 404 (an unknown secret and a malformed one alike). */
export async function byToken(db: D1Database, token: string): Promise<LinkedInvitation | null> {
  if (!/^inv_[A-Za-z0-9_-]{43}$/.test(token)) return null;
  return db
    .prepare(
      `SELECT i.id, i.org_id, i.email, i.role, i.created_at, i.expires_at, i.accepted_at, i.revoked_at,
         o.name AS org_name, ${MAKER_STANDS} AS maker_stands
       FROM invitations i JOIN organizations o ON o.id = i.org_id
       WHERE i.token_hash = ?`,
    )
    .bind(await sha256Base64Url(token))
    .first<LinkedInvitation>();
}

/**
 * The org's pending invitations to `email` as `normalizedEmail` reads it (the way acceptance matches
 * it: `+tags` and Gmail's dots aside), or made by `invitedBy`: their ids.
 */
export async function pendingInvitations(
  db: D1Database,
  orgId: string,
  who: { email?: string; invitedBy?: string },
  now = Date.now(),
): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT id, email, invited_by FROM invitations
       WHERE org_id = ? AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > ?`,
    )
    .bind(orgId, now)
    .all<{ id: string; email: string; invited_by: string | null }>();
  const person = who.email === undefined ? null : normalizedEmail(who.email);
  return results
    .filter(
      (row) =>
        (person !== null && normalizedEmail(row.email) === person) ||
        (who.invitedBy !== undefined && row.invited_by === who.invitedBy),
    )
    .map((row) => row.id);
}

/**
 * Revokes invitations by id (still pending ones only), for a batch, and with `madeBy` every pending
 * link its maker made in the org, matched when the statement runs (so a link made a moment before,
 * after the ids were read, closes too). `afterChange`: only when the statement before it changed a
 * row (an audit row written only with the change it records).
 */
export function revokeInvitations(
  db: D1Database,
  ids: string[],
  now: number,
  {
    afterChange = false,
    madeBy = null,
  }: { afterChange?: boolean; madeBy?: { orgId: string; userId: string } | null } = {},
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE invitations SET revoked_at = ?1
       WHERE (id IN (SELECT value FROM json_each(?2)) OR (org_id = ?3 AND invited_by = ?4))
       AND accepted_at IS NULL AND revoked_at IS NULL ${afterChange ? "AND changes() = 1" : ""}`,
    )
    .bind(now, JSON.stringify(ids), madeBy?.orgId ?? null, madeBy?.userId ?? null);
}

/**
 * Whether `email` is already a member's of the org, matched as acceptance matches it: an admin
 * inviting `dan+2@` for a member `dan@` would otherwise plant a link back in for that member.
 */
async function isMembersEmail(db: D1Database, orgId: string, email: string): Promise<boolean> {
  const { results } = await db
    .prepare(
      "SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ?",
    )
    .bind(orgId)
    .all<{ email: string }>();
  const person = normalizedEmail(email);
  return results.some((row) => normalizedEmail(row.email) === person);
}

/** An invitation that can no longer be used answers 410, saying why. */
export function requirePending(row: InvitationRow, now: number): void {
  const status = statusOf(row, now);
  if (status !== "pending") {
    throw new AppError(
      "gone",
      `This invitation was ${status === "expired" ? "not used in time" : status}`,
    );
  }
}

/**
 * A link is good only while it is pending and its maker may still grant what it invites to
 * (checked at use, docs/2026-12-06-bearer-links.md): removal and demotion close a maker's links
 * as they happen, but a link must not depend on every path that ends a maker's rights remembering
 * to (an erased maker's links stayed open). A link whose maker no longer stands answers exactly
 * as a revoked one, 410, and changes nothing.
 */
export function requireUsable(row: LinkedInvitation, now: number): void {
  requirePending(row, now);
  if (row.maker_stands !== 1) throw new AppError("gone", "This invitation was revoked");
}

/**
 * Invites an email with a role, for `POST .../invitations` and `POST .../members` alike: everyone
 * gets a link, whether or not they have an account, and joins only by accepting it signed in with
 * the invited email. Nobody is added to an org without their say (2026-12-02): an admin could
 * otherwise put anyone into their org by email, and since Parley verifies no address, whoever
 * signed up first with an email would join every org that invited it. The link, delivered by the
 * inviter to the real mailbox, is what proves the mailbox; the answer is the same for an email with
 * an account and one without, so it tells the inviter nothing about who has an account.
 */
export async function invite(
  c: Context<AppEnv>,
  input: CreateInvitation | AddMember,
): Promise<Response> {
  const { userId } = c.get("caller");
  const db = c.env.DB;
  const access = await orgAccess(db, userId, c.req.param("orgId") ?? "");
  requireRole(access, "admin");
  // Only owners make owners.
  if (input.role === "owner") requireRole(access, "owner");
  if (await isMembersEmail(db, access.orgId, input.email)) {
    throw new AppError("conflict", "This person is already a member", { field: "email" });
  }
  // Where links point, before anything is written: a server without PUBLIC_URL refuses the
  // invitation whole rather than storing one it cannot hand out.
  const base = publicBase(c, "Invitations");
  const now = Date.now();
  // One live link per person and org: a new invitation (another role, say) replaces the older.
  const older = await pendingInvitations(db, access.orgId, { email: input.email }, now);
  const token = `inv_${toBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const row: InvitationRow = {
    id: newId("invitation", now),
    org_id: access.orgId,
    email: input.email,
    role: input.role,
    created_at: now,
    expires_at: now + INVITATION_TTL_MS,
    accepted_at: null,
    revoked_at: null,
  };
  // The rights checked above hold when the row is written, not only when they were read: a link
  // is made only while its maker still has the role it needs, in the same statement. A removal
  // or demotion racing it either comes first (no link) or closes it (by maker, in SQL). Found by
  // the outside probe, 2026-12-04: an admin inviting while being removed kept a live admin link.
  const makers = input.role === "owner" ? "('owner')" : "('owner', 'admin')";
  // The link is mailed to the invitee too (2026-12-06), with the invitation or not at all.
  const mail = await invitationMail(c, { row, inviterId: userId, link: `${base}/invite#${token}` });
  const [made] = await db.batch([
    db
      .prepare(
        `INSERT INTO invitations (id, org_id, email, role, token_hash, invited_by, created_at, expires_at)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE EXISTS (
           SELECT 1 FROM memberships WHERE org_id = ?2 AND user_id = ?6 AND role IN ${makers})`,
      )
      .bind(
        row.id,
        row.org_id,
        row.email,
        row.role,
        await sha256Base64Url(token),
        userId,
        now,
        row.expires_at,
      ),
    // Only with the new link. The same spelling is matched in SQL too, so two invitations racing
    // leave one live link (the later); other spellings are the ones read above.
    db
      .prepare(
        `UPDATE invitations SET revoked_at = ?1
         WHERE org_id = ?2 AND id <> ?3 AND accepted_at IS NULL AND revoked_at IS NULL
           AND (id IN (SELECT value FROM json_each(?4)) OR lower(trim(email)) = lower(trim(?5)))
           AND EXISTS (SELECT 1 FROM invitations WHERE id = ?3)`,
      )
      .bind(now, row.org_id, row.id, JSON.stringify(older), row.email),
    auditStatement(
      db,
      {
        orgId: access.orgId,
        actorId: userId,
        action: "invitation.created",
        subjectType: "invitation",
        subjectId: row.id,
        data: { role: input.role },
      },
      { now, afterChange: true },
    ),
    ...mail.statements,
  ]);
  if (made?.meta.changes !== 1) {
    throw new AppError("forbidden", "You can no longer invite people to this organization");
  }
  if (mail.mailed) sendQueuedMail(c.env, c.executionCtx);
  return c.json(
    { ...toInvitation(row, now), url: `${base}/invite#${token}`, mailed: mail.mailed },
    201,
  );
}

/** `/api/orgs/:orgId/invitations`: owners and admins make, list and revoke an org's invitations. */
export const orgInvitations = new Hono<AppEnv>()
  .post(
    "/:orgId/invitations",
    describeRoute({
      tags: ["Invitations"],
      summary: "Invite someone by link",
      description:
        "Every email gets a pending invitation with its link, whether or not it has an account; nobody joins unasked.",
      responses: {
        201: json(invitationSchema, "Pending, with its url (shown this once)"),
        ...errors(401, 403, 404, 409),
      },
    }),
    jsonBody(createInvitationSchema),
    (c) => invite(c, c.req.valid("json")),
  )

  .get(
    "/:orgId/invitations",
    describeRoute({
      tags: ["Invitations"],
      summary: "The org's invitations (never a link)",
      responses: { 200: json(invitationPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const db = c.env.DB;
      const access = await orgAccess(db, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const now = Date.now();
      const page = await idPage(
        db,
        {
          select: `SELECT ${COLUMNS} FROM invitations`,
          where: "org_id = ?",
          binds: [access.orgId],
        },
        c.req.valid("query"),
        (row: InvitationRow) => toInvitation(row, now),
      );
      return c.json(page);
    },
  )

  /** Revokes a pending invitation: its link stops working at once. Revoking again is harmless. */
  .delete(
    "/:orgId/invitations/:invitationId",
    describeRoute({
      tags: ["Invitations"],
      summary: "Revoke an invitation",
      responses: { 200: json(invitationSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const id = c.req.param("invitationId");
      const row = isId("invitation", id)
        ? await db
            .prepare(`SELECT ${COLUMNS} FROM invitations WHERE id = ? AND org_id = ?`)
            .bind(id, access.orgId)
            .first<InvitationRow>()
        : null;
      if (!row) throw notFound("Invitation");
      // An admin may not undo an owner's invitation to the owner role (they could not make one).
      if (row.role === "owner") requireRole(access, "owner");
      const now = Date.now();
      await db.batch([
        db
          .prepare(
            "UPDATE invitations SET revoked_at = ? WHERE id = ? AND accepted_at IS NULL AND revoked_at IS NULL",
          )
          .bind(now, row.id),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "invitation.revoked",
            subjectType: "invitation",
            subjectId: row.id,
          },
          { now, afterChange: true },
        ),
      ]);
      const after = await db
        .prepare(`SELECT ${COLUMNS} FROM invitations WHERE id = ?`)
        .bind(row.id)
        .first<InvitationRow>();
      return c.json(toInvitation(after ?? row, now));
    },
  );
