import {
  AppError,
  erasureRecordPageSchema,
  erasureRecordSchema,
  erasureRequestSchema,
  pageQuerySchema,
  type Role,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { atLeast, notFound, orgAccess, requireRole } from "../auth/access.ts";
import { isFormerMember } from "../db/former-members.ts";
import { idPage } from "../db/pagination.ts";
import { earlierRequest, fileErasure, retryErasure, toErasureRequest } from "../erasure/file.ts";
import type { ErasurePlan, ErasureRequestRow } from "../erasure/plan.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

const emptyPlan = (): ErasurePlan => ({
  userId: null,
  orgIds: [],
  projectIds: [],
  sessionIds: [],
  deleteOrgIds: [],
  membershipOrgId: null,
});

/** Whether the subject of an erasure is still there to erase (a member may have been re-added). */
async function present(
  db: D1Database,
  orgId: string,
  subject: { type: "member" | "project" | "session"; id: string },
): Promise<boolean> {
  // A former member (left or removed since) is there to erase too, until they are erased.
  if (subject.type === "member" && (await isFormerMember(db, orgId, subject.id))) return true;
  const sql = {
    member: "SELECT 1 AS ok FROM memberships WHERE org_id = ? AND user_id = ?",
    project: "SELECT 1 AS ok FROM projects WHERE org_id = ? AND id = ?",
    session: "SELECT 1 AS ok FROM sessions WHERE org_id = ? AND id = ?",
  }[subject.type];
  return (await db.prepare(sql).bind(orgId, subject.id).first()) !== null;
}

/** A project or session that is not there: 410 if it was erased (for members of its org), else 404. */
async function missing(
  db: D1Database,
  userId: string,
  id: string,
  what: "Project" | "Session",
): Promise<AppError> {
  const erased = await db
    .prepare(
      "SELECT 1 AS t FROM tombstones t JOIN memberships m ON m.org_id = t.org_id AND m.user_id = ? WHERE t.subject_id = ?",
    )
    .bind(userId, id)
    .first();
  return erased ? new AppError("gone", `This ${what.toLowerCase()} was erased`) : notFound(what);
}

async function emailOf(db: D1Database, userId: string): Promise<string | null> {
  const row = await db
    .prepare("SELECT email FROM users WHERE id = ?")
    .bind(userId)
    .first<{ email: string }>();
  return row?.email ?? null;
}

async function ids(db: D1Database, sql: string, ...bindings: string[]): Promise<string[]> {
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/**
 * Erasure requests of an org (GDPR Art. 17): owners and admins for members, projects and sessions;
 * a member for their own sessions. Everyone else gets 403, or 404 for a foreign org.
 */
export const erasure = new Hono<AppEnv>()
  .post(
    "/:orgId/erasure-requests",
    describeRoute({
      tags: ["Erasure"],
      summary: "File an erasure request",
      responses: {
        202: json(erasureRecordSchema, "Filed (or the same request again)"),
        ...errors(401, 403, 404),
      },
    }),
    jsonBody(erasureRequestSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const access = await orgAccess(db, userId, c.req.param("orgId"));
      const { subject, reason } = c.req.valid("json");
      const admin = atLeast(access.role, "admin");
      // Who may ask comes first, before anything is looked up: members and projects are erased by
      // owners and admins only; a member erases only their own sessions (checked below).
      if (subject.type !== "session") requireRole(access, "admin");
      // The request already filed for this subject, in this org, of this type (a member only ever
      // gets back their own): one that failed runs again; one in progress answers; a completed one
      // answers when the subject is gone, but a member re-added since is erased anew.
      const earlier = await earlierRequest(c.env, access.orgId, subject);
      if (earlier && (admin || earlier.requested_by === userId)) {
        if (earlier.status === "failed") {
          return c.json(toErasureRequest(await retryErasure(c.env, earlier)), 202);
        }
        if (earlier.status !== "completed" || !(await present(db, access.orgId, subject))) {
          return c.json(toErasureRequest(earlier), 202);
        }
      }
      const plan = emptyPlan();

      if (subject.type === "member") {
        const target = await db
          .prepare("SELECT role FROM memberships WHERE org_id = ? AND user_id = ?")
          .bind(access.orgId, subject.id)
          .first<{ role: Role }>();
        // Someone who left (or was removed) still has their sessions, shared-chat messages and
        // spend here under their name: they are erased like a member, found in the audit trail.
        if (!target && !(await isFormerMember(db, access.orgId, subject.id))) {
          throw notFound("Member");
        }
        if (target?.role === "owner") {
          requireRole(access, "owner");
          const owners = await db
            .prepare("SELECT COUNT(*) AS n FROM memberships WHERE org_id = ? AND role = 'owner'")
            .bind(access.orgId)
            .first<{ n: number }>();
          if ((owners?.n ?? 0) <= 1) {
            throw new AppError(
              "conflict",
              "The last owner cannot be erased: add another owner first",
            );
          }
        }
        plan.userId = subject.id;
        plan.email = await emailOf(db, subject.id);
        plan.orgIds = [access.orgId];
        plan.membershipOrgId = access.orgId;
        plan.sessionIds = await ids(
          db,
          "SELECT id FROM sessions WHERE org_id = ? AND owner_id = ?",
          access.orgId,
          subject.id,
        );
        // Every shared chat of the org that has been used: the member's messages go, and others'
        // messages naming them are scrubbed.
        plan.chatProjectIds = await ids(
          db,
          "SELECT DISTINCT project_id AS id FROM preview_authors WHERE org_id = ?",
          access.orgId,
        );
      } else if (subject.type === "project") {
        const project = await db
          .prepare("SELECT id FROM projects WHERE id = ? AND org_id = ?")
          .bind(subject.id, access.orgId)
          .first<{ id: string }>();
        if (!project) throw await missing(db, userId, subject.id, "Project");
        plan.projectIds = [project.id];
        plan.sessionIds = await ids(db, "SELECT id FROM sessions WHERE project_id = ?", project.id);
      } else {
        const session = await db
          .prepare("SELECT id, owner_id FROM sessions WHERE id = ? AND org_id = ?")
          .bind(subject.id, access.orgId)
          .first<{ id: string; owner_id: string }>();
        if (!session) throw await missing(db, userId, subject.id, "Session");
        // Another member's session is private: a member learns nothing of it, as for a foreign one.
        if (session.owner_id !== userId && !admin) throw notFound("Session");
        plan.sessionIds = [session.id];
      }

      const request = await fileErasure(c.env, {
        requestedBy: userId,
        orgId: access.orgId,
        subject,
        reason: reason ?? null,
        plan,
      });
      return c.json(toErasureRequest(request), 202);
    },
  )

  .get(
    "/:orgId/erasure-requests",
    describeRoute({
      tags: ["Erasure"],
      summary: "The org's erasure requests",
      responses: { 200: json(erasureRecordPageSchema), ...errors(401, 403, 404) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      const everyone = atLeast(access.role, "admin");
      const page = await idPage(
        c.env.DB,
        {
          select: "SELECT * FROM erasure_requests",
          where: "org_id = ? AND (? OR requested_by = ?)",
          binds: [access.orgId, everyone ? 1 : 0, userId],
        },
        c.req.valid("query"),
        toErasureRequest,
      );
      return c.json(page);
    },
  )

  .get(
    "/:orgId/erasure-requests/:requestId",
    describeRoute({
      tags: ["Erasure"],
      summary: "One erasure request",
      responses: { 200: json(erasureRecordSchema), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const access = await orgAccess(c.env.DB, userId, c.req.param("orgId"));
      const row = await c.env.DB.prepare(
        "SELECT * FROM erasure_requests WHERE id = ? AND org_id = ?",
      )
        .bind(c.req.param("requestId"), access.orgId)
        .first<ErasureRequestRow>();
      if (!row || (row.requested_by !== userId && !atLeast(access.role, "admin")))
        throw notFound("Erasure request");
      return c.json(toErasureRequest(row));
    },
  );
