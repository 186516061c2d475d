import {
  AppError,
  orgSessionsQuerySchema,
  type Page,
  type Session,
  sessionPageSchema,
  sessionSchema,
  updateSessionSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { checkChosenModel } from "../assistants/models.ts";
import { assistantChanged } from "../assistants/push.ts";
import { atLeast, type SessionRow, sessionAccess } from "../auth/access.ts";
import { acceptApiKey, orgCaller } from "../auth/api-keys.ts";
import { billingAccount } from "../billing/account.ts";
import { resolveLabels } from "../billing/labels.ts";
import { auditStatement } from "../db/audit.ts";
import { idPage, iso } from "../db/pagination.ts";
import { fileErasure } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { empty, errors, json, security } from "../http/openapi.ts";
import { jsonBody, query } from "../http/validate.ts";

export type SessionRowOut = Omit<SessionRow, "deleted_at">;

export const toSession = (
  row: SessionRowOut,
  spendMicros: number,
  ownerLabel: string,
): Session => ({
  id: row.id,
  projectId: row.project_id,
  orgId: row.org_id,
  ownerId: row.owner_id,
  ownerLabel,
  title: row.title,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  lastActivityAt: iso(row.updated_at),
  spendMicros,
  model: row.model ?? null,
});

/** The spend of each session of a page, in one call to the org's BillingAccount. */
export async function sessionSpend(
  env: Env,
  orgId: string,
  ids: string[],
): Promise<Record<string, number>> {
  return ids.length === 0 ? {} : billingAccount(env, orgId).spendBySession(ids);
}

/**
 * A page of session rows as the API shows them: each with its spend (one BillingAccount call) and
 * its owner's name (one D1 query), whatever the page's size.
 */
export async function sessionPage(
  env: Env,
  orgId: string,
  rows: SessionRowOut[],
): Promise<Session[]> {
  const ids = rows.map((row) => row.id);
  const [spend, labels] = await Promise.all([
    sessionSpend(env, orgId, ids),
    resolveLabels(env.DB, orgId, { members: rows.map((row) => row.owner_id) }),
  ]);
  return rows.map((row) => toSession(row, spend[row.id] ?? 0, labels.member(row.owner_id)));
}

/** A page of session rows (`idPage`) as the API shows them (`sessionPage`), with its cursor. */
export async function sessionListPage(
  env: Env,
  orgId: string,
  page: Page<SessionRowOut>,
): Promise<Page<Session>> {
  return { items: await sessionPage(env, orgId, page.items), nextCursor: page.nextCursor };
}

/** A session list's query up to its filter (`idPage`, key `s.id`): sessions of live projects. */
export const SESSION_LIST_SELECT = `SELECT s.id, s.project_id, s.org_id, s.owner_id, s.title,
    s.created_at, s.updated_at, s.model
  FROM sessions s JOIN projects p ON p.id = s.project_id AND p.deleted_at IS NULL`;

/**
 * The sessions of an org, across its projects, newest first (routes under /api/orgs): a member
 * sees their own; owners, admins and the org's API keys (`sessions:read`) every member's (the
 * erasure picker, a tenant's server), filtered by `project` and `member` as they like. A member
 * naming another member is refused, as for usage.
 */
export const orgSessions = new Hono<AppEnv>().get(
  "/:orgId/sessions",
  describeRoute({
    tags: ["Sessions"],
    summary: "The org's sessions across projects",
    security: security.memberOrApiKey("sessions:read"),
    responses: { 200: json(sessionPageSchema), ...errors(401, 403, 404) },
  }),
  acceptApiKey("sessions:read"),
  query(orgSessionsQuerySchema),
  async (c) => {
    const who = await orgCaller(c, c.req.param("orgId"));
    const q = c.req.valid("query");
    let owner = q.member;
    if (who.kind === "member" && !atLeast(who.access.role, "admin")) {
      if (owner !== undefined && owner !== who.userId) {
        throw new AppError("forbidden", "Members can only list their own sessions");
      }
      owner = who.userId;
    }
    const page = await idPage<SessionRowOut>(
      c.env.DB,
      {
        select: SESSION_LIST_SELECT,
        where: `s.org_id = ?1 AND s.deleted_at IS NULL
          AND (?2 IS NULL OR s.project_id = ?2) AND (?3 IS NULL OR s.owner_id = ?3)`,
        binds: [who.orgId, q.project ?? null, owner ?? null],
        id: "s.id",
      },
      q,
    );
    return c.json(await sessionListPage(c.env, who.orgId, page));
  },
);

/** One session: its owner, or an admin or owner of its org (routes under /api/sessions). */
export const sessions = new Hono<AppEnv>()

  .get(
    "/:sessionId",
    describeRoute({
      tags: ["Sessions"],
      summary: "One session",
      responses: { 200: json(sessionSchema), ...errors(401, 404, 410) },
    }),
    async (c) => {
      const { session } = await sessionAccess(
        c.env.DB,
        c.get("caller").userId,
        c.req.param("sessionId"),
      );
      // The same figure as the project's session list: what its model calls cost the org so far.
      const [item] = await sessionPage(c.env, session.org_id, [session]);
      return c.json(item);
    },
  )

  /**
   * Renames a session or picks its model: its owner only (an admin who may read it may not: 403).
   * The title follows the rules of a title given at creation; a renamed session keeps its title
   * (the automatic one is only set while there is none). The model must be one the org allows (a
   * live catalogue model: 400 otherwise); null goes back to the profile's. Not activity:
   * `updatedAt` does not move.
   */
  .patch(
    "/:sessionId",
    describeRoute({
      tags: ["Sessions"],
      summary: "Rename a session or pick its model (its owner only)",
      responses: { 200: json(sessionSchema), ...errors(400, 401, 403, 404, 410) },
    }),
    jsonBody(updateSessionSchema),
    async (c) => {
      const { userId } = c.get("caller");
      const db = c.env.DB;
      const { session } = await sessionAccess(db, userId, c.req.param("sessionId"));
      if (session.owner_id !== userId) {
        throw new AppError("forbidden", "Only the session's owner can rename it or pick its model");
      }
      const input = c.req.valid("json");
      if (input.model) await checkChosenModel(c.env, session.org_id, input.model);
      const [update] = await db.batch([
        db
          .prepare(
            // Only what was sent: a rename racing a model pick keeps both.
            `UPDATE sessions SET title = COALESCE(?1, title),
               model = CASE WHEN ?2 THEN ?3 ELSE model END
             WHERE id = ?4 AND deleted_at IS NULL RETURNING title, model`,
          )
          .bind(
            input.title ?? null,
            input.model === undefined ? 0 : 1,
            input.model ?? null,
            session.id,
          ),
        // The title is the member's content: the audit row says only that it changed.
        auditStatement(
          db,
          {
            orgId: session.org_id,
            actorId: userId,
            action: input.title === undefined ? "session.model_changed" : "session.renamed",
            subjectType: "session",
            subjectId: session.id,
            data: {
              title: input.title !== undefined,
              ...(input.model === undefined ? {} : { model: input.model }),
            },
          },
          { afterChange: true },
        ),
      ]);
      const stored = update?.results[0] as
        | { title: string | null; model: string | null }
        | undefined;
      if (update?.meta.changes !== 1 || !stored) {
        throw new AppError("gone", "This session was deleted");
      }
      const { title, model } = stored;
      // The session's agent keeps what its turns resolve to: its next turn reads the new model.
      if (input.model !== undefined) await assistantChanged(c.env, { sessionId: session.id });
      const [item] = await sessionPage(c.env, session.org_id, [{ ...session, title, model }]);
      return c.json(item);
    },
  )

  /**
   * Deletes a session through the erasure path: the D1 mark comes first (the Worker answers 410 and
   * never addresses the object again), then the agent wipes its chat, sockets and alarms.
   */
  .delete(
    "/:sessionId",
    describeRoute({
      tags: ["Sessions"],
      summary: "Delete (erase) a session",
      responses: { 204: empty(), ...errors(401, 403, 404) },
    }),
    async (c) => {
      const { userId } = c.get("caller");
      const { session } = await sessionAccess(c.env.DB, userId, c.req.param("sessionId"));
      await fileErasure(c.env, {
        requestedBy: userId,
        orgId: session.org_id,
        subject: { type: "session", id: session.id },
        reason: "session deleted",
        plan: {
          userId: null,
          orgIds: [],
          projectIds: [],
          sessionIds: [session.id],
          deleteOrgIds: [],
          membershipOrgId: null,
        },
      });
      return c.body(null, 204);
    },
  );
