import {
  AppError,
  addMemberSchema,
  createOrgSchema,
  type FormerMember,
  formerMemberPageSchema,
  invitationSchema,
  type Member,
  memberPageSchema,
  memberSchema,
  newId,
  type OrgSummary,
  orgPageSchema,
  orgSummarySchema,
  pageQuerySchema,
  type Role,
  updateMemberSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { revokeConnections } from "../agents/revocation.ts";
import { atLeast, notFound, orgAccess, requireRole } from "../auth/access.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { openBillingAccount } from "../billing/account.ts";
import { auditStatement } from "../db/audit.ts";
import { formerMembers } from "../db/former-members.ts";
import { createOrgStatements } from "../db/orgs.ts";
import { cursorBound, idPage, iso, toPage } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";
import { invite, pendingInvitations, revokeInvitations } from "./invitations.ts";

interface OrgRow {
  id: string;
  name: string;
  role: Role;
  created_at: number;
}

/** A member's row (`m` memberships joined to `u` users). */
const MEMBER_COLUMNS = "m.user_id, u.email, u.name, m.role, m.created_at";

interface MemberRow {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: number;
}

const toOrg = (row: OrgRow): OrgSummary => ({
  id: row.id,
  name: row.name,
  role: row.role,
  createdAt: iso(row.created_at),
});

const toMember = (row: MemberRow): Member => ({
  userId: row.user_id,
  email: row.email,
  name: row.name,
  role: row.role,
  joinedAt: iso(row.created_at),
});

/**
 * Deletes or re-roles a membership unless that would leave the org without an owner. The check and
 * the write are one statement, so two owners demoting each other at once cannot both succeed.
 */
const keepsAnOwner = `(role <> 'owner' OR (SELECT COUNT(*) FROM memberships WHERE org_id = ?1 AND role = 'owner') > 1)`;

async function memberRow(db: D1Database, orgId: string, userId: string): Promise<MemberRow> {
  const row = await db
    .prepare(
      `SELECT ${MEMBER_COLUMNS} FROM memberships m
       JOIN users u ON u.id = m.user_id WHERE m.org_id = ? AND m.user_id = ?`,
    )
    .bind(orgId, userId)
    .first<MemberRow>();
  if (!row) throw notFound("Member");
  return row;
}

export const orgs = new Hono<AppEnv>()

  .get(
    "/",
    describeRoute({
      tags: ["Orgs"],
      summary: "The caller's orgs",
      responses: { 200: json(orgPageSchema), ...errors(401) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const page = await idPage(
        c.env.DB,
        {
          select: `SELECT o.id, o.name, m.role, o.created_at FROM memberships m
            JOIN organizations o ON o.id = m.org_id`,
          where: "m.user_id = ?",
          binds: [c.get("caller").userId],
          id: "o.id",
        },
        c.req.valid("query"),
        toOrg,
      );
      return c.json(page);
    },
  )

  .post(
    "/",
    describeRoute({
      tags: ["Orgs"],
      summary: "Create an org (starts at zero credits)",
      responses: { 201: json(orgSummarySchema), ...errors(401, 429) },
    }),
    jsonBody(createOrgSchema),
    async (c) => {
      const { name } = c.req.valid("json");
      const { userId } = c.get("caller");
      // Each org has its own daily free preview allowance, so unbounded orgs were unbounded free
      // model calls. 5 a minute per user (wrangler.jsonc), before anything is written; keyed by a
      // hash so the limiter never holds a user id.
      const { success } = await c.env.ORG_CREATE_RATE_LIMITER.limit({
        key: await keyedHash(c.env.ERASURE_HASH_KEY, "org-create-rate", userId),
      });
      if (!success) {
        throw new AppError("rate_limited", "Too many new organizations; try again in a minute");
      }
      const db = c.env.DB;
      const now = Date.now();
      const orgId = newId("org", now);
      await db.batch(createOrgStatements(db, { id: orgId, name, ownerId: userId, now }));
      await openBillingAccount(c.env, orgId);
      return c.json(toOrg({ id: orgId, name, role: "owner", created_at: now }), 201);
    },
  )

  .get(
    "/:orgId",
    describeRoute({
      tags: ["Orgs"],
      summary: "One org",
      responses: { 200: json(orgSummarySchema), ...errors(401, 404) },
    }),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      const org = await c.env.DB.prepare(
        "SELECT id, name, created_at FROM organizations WHERE id = ?",
      )
        .bind(access.orgId)
        .first<Omit<OrgRow, "role">>();
      if (!org) throw notFound("Organization");
      return c.json(toOrg({ ...org, role: access.role }));
    },
  )

  .get(
    "/:orgId/members",
    describeRoute({
      tags: ["Orgs"],
      summary: "The org's members",
      responses: { 200: json(memberPageSchema), ...errors(401, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      // Keyed by the member's user id: selected again as `id`, the key `idPage` reads.
      const page = await idPage(
        c.env.DB,
        {
          select: `SELECT m.user_id AS id, ${MEMBER_COLUMNS} FROM memberships m
            JOIN users u ON u.id = m.user_id`,
          where: "m.org_id = ?",
          binds: [access.orgId],
          id: "m.user_id",
        },
        c.req.valid("query"),
        (row: MemberRow & { id: string }) => toMember(row),
      );
      return c.json(page);
    },
  )

  /**
   * People who were members and are not any more, whose data in the org is not erased yet
   * (db/former-members.ts): owners and admins erase them by name. Never another org's: the org is
   * the caller's, checked before anything is read.
   */
  .get(
    "/:orgId/former-members",
    describeRoute({
      tags: ["Orgs"],
      summary: "The org's former members (owners and admins)",
      responses: { 200: json(formerMemberPageSchema), ...errors(400, 401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const access = await orgAccess(c.env.DB, c.get("caller").userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const { cursor, limit } = c.req.valid("query");
      const rows = await formerMembers(c.env.DB, access.orgId, {
        before: cursorBound(cursor),
        limit: limit + 1,
      });
      return c.json(
        toPage(
          rows,
          limit,
          (row) => row.user_id,
          (row): FormerMember => ({
            userId: row.user_id,
            email: row.email,
            name: row.name,
            leftAt: iso(row.left_at),
          }),
        ),
      );
    },
  )

  /**
   * Adds someone by email, which is inviting them: the answer is the invitation with its link
   * (2026-12-02; before, an existing account joined at once, unasked). See `invite`.
   */
  .post(
    "/:orgId/members",
    describeRoute({
      tags: ["Orgs"],
      summary: "Add someone by email: an invitation link, as POST .../invitations",
      responses: {
        201: json(invitationSchema, "Pending, with its url (shown this once)"),
        ...errors(401, 403, 404, 409),
      },
    }),
    jsonBody(addMemberSchema),
    (c) => invite(c, c.req.valid("json")),
  )

  .patch(
    "/:orgId/members/:userId",
    describeRoute({
      tags: ["Orgs"],
      summary: "Change a member's role",
      responses: { 200: json(memberSchema), ...errors(401, 403, 404, 409) },
    }),
    jsonBody(updateMemberSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      requireRole(access, "admin");
      const target = await memberRow(db, access.orgId, c.req.param("userId"));
      const { role } = c.req.valid("json");
      if ((role === "owner" || target.role === "owner") && !atLeast(access.role, "owner")) {
        throw new AppError("forbidden", "Only an owner can grant or change the owner role");
      }
      if (role !== target.role) {
        const now = Date.now();
        // A demoted member's pending links close too: a link grants what its maker could grant
        // when it is accepted, not when it was made (found by the outside probe, 2026-12-02).
        const demoted = role === "member" || (target.role === "owner" && role === "admin");
        const [update] = await db.batch([
          db
            .prepare(
              `UPDATE memberships SET role = ?3 WHERE org_id = ?1 AND user_id = ?2 AND ${keepsAnOwner}`,
            )
            .bind(access.orgId, target.user_id, role),
          auditStatement(
            db,
            {
              orgId: access.orgId,
              actorId: userId,
              action: "member.role_changed",
              subjectType: "user",
              subjectId: target.user_id,
              data: { from: target.role, to: role },
            },
            { now, afterChange: true },
          ),
          // Only if the role did change (the update above may have been refused for the last owner).
          db
            .prepare(
              `UPDATE users SET token_version = token_version + 1 WHERE id = ?1
             AND EXISTS (SELECT 1 FROM memberships WHERE org_id = ?2 AND user_id = ?1 AND role = ?3)`,
            )
            .bind(target.user_id, access.orgId, role),
          // By maker, in SQL: a link they made a moment ago closes too.
          ...(demoted
            ? [
                revokeInvitations(db, [], now, {
                  afterChange: true,
                  madeBy: { orgId: access.orgId, userId: target.user_id },
                }),
              ]
            : []),
        ]);
        if (update?.meta.changes !== 1) throw lastOwner();
        await revokeConnections(c.env, { userId: target.user_id });
      }
      return c.json(toMember({ ...target, role }));
    },
  )

  /** Removes a member. Anyone may leave; admins remove members and admins; owners remove anyone. */
  .delete(
    "/:orgId/members/:userId",
    describeRoute({
      tags: ["Orgs"],
      summary: "Remove a member (or leave)",
      responses: { 204: empty(), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      const target = await memberRow(db, access.orgId, c.req.param("userId"));
      if (target.user_id !== userId) {
        requireRole(access, "admin");
        if (target.role === "owner") requireRole(access, "owner");
      }
      // Removed means out: their pending links to this org, and the ones they made, go too (a link
      // to their own address would otherwise let them straight back in).
      const now = Date.now();
      const links = await pendingInvitations(
        db,
        access.orgId,
        { email: target.email, invitedBy: target.user_id },
        now,
      );
      const [removal] = await db.batch([
        db
          .prepare(`DELETE FROM memberships WHERE org_id = ?1 AND user_id = ?2 AND ${keepsAnOwner}`)
          .bind(access.orgId, target.user_id),
        auditStatement(
          db,
          {
            orgId: access.orgId,
            actorId: userId,
            action: "member.removed",
            subjectType: "user",
            subjectId: target.user_id,
          },
          { afterChange: true },
        ),
        // Only with the removal: a refused one changes nothing.
        db
          .prepare(
            `UPDATE invitations SET revoked_at = ?1
           WHERE (id IN (SELECT value FROM json_each(?2)) OR (org_id = ?3 AND invited_by = ?4))
           AND accepted_at IS NULL AND revoked_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM memberships WHERE org_id = ?3 AND user_id = ?4)`,
          )
          .bind(now, JSON.stringify(links), access.orgId, target.user_id),
      ]);
      if (removal?.meta.changes !== 1) throw lastOwner();
      // Whoever was removed stops hearing the org's chats now, not when they next speak.
      await revokeConnections(c.env, { userId: target.user_id, orgId: access.orgId });
      return c.body(null, 204);
    },
  );

const lastOwner = () =>
  new AppError("conflict", "An organization needs at least one owner: add another owner first");
