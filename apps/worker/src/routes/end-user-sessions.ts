import {
  AppError,
  type ChatOpening,
  type ConnectTicket,
  chatOpeningSchema,
  createEndUserSessionSchema,
  type EmbedMe,
  embedMeSchema,
  endUserConnectTicketSchema,
  issuedConnectTicketSchema,
  limitStatusSchema,
  newId,
  pageQuerySchema,
  sessionPageSchema,
  sessionSchema,
  updateEndUserSessionSchema,
} from "@parley/shared";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { describeRoute } from "hono-openapi";
import { resolveOpening } from "../assistants/resolve.ts";
import { notFound } from "../auth/access.ts";
import { issueConnectTicket } from "../auth/connect-tickets.ts";
import { type EndUserPrincipal, endUserSessionAccess } from "../auth/end-user-access.ts";
import { bearerToken } from "../auth/middleware.ts";
import { verifyEndUserAccessToken } from "../auth/tokens.ts";
import { idPage, iso } from "../db/pagination.ts";
import { config } from "../env.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { isPlatformOrigin } from "../http/same-origin.ts";
import { jsonBody, query } from "../http/validate.ts";
import { limitStatus } from "./billing-limits.ts";
import {
  SESSION_LIST_SELECT,
  type SessionRowOut,
  sessionListPage,
  sessionPage,
} from "./sessions.ts";

/**
 * What an end user does through the embed (docs/2026-12-02-apps-and-end-users.md), under
 * `/api/embed` with an end-user access token: read who they are and their app, list, open and
 * rename their own sessions, and get a connect ticket for one. Nothing here reaches a member's
 * session or any admin surface; member tokens are refused (`verifyEndUserAccessToken` pins the
 * end-user `typ` and audience).
 */

export type EndUserEnv = AppEnv & {
  Variables: { endUser: EndUserPrincipal & { tokenExpiresAt: number; showCost: boolean } };
};

/**
 * A session as its end user may see it: an app that hides cost shows them no spend (0), as it
 * sends no price in the replies; the org's billing keeps the real figures.
 */
const shownSession = <T extends { spendMicros: number }>(session: T, showCost: boolean): T =>
  showCost ? session : { ...session, spendMicros: 0 };

const refused = () => new AppError("unauthorized", "Invalid or expired access token");

/**
 * Verifies the end-user access token and that its end user and app still live, and, for a
 * browser's request (`Origin`), that the page is on the app's list: every answer to a listed
 * origin, refusals included, carries CORS headers for exactly that origin; an unlisted one gets a
 * 403 without them. One D1 read.
 */
export const requireEndUser = createMiddleware<EndUserEnv>(async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw new AppError("unauthorized", "Missing access token");
  const verified = await verifyEndUserAccessToken(config(c.env), token);
  const origin = c.req.header("origin") ?? null;
  // Parley's own pages (the developers' area's preview) need no listing (same-origin.ts).
  const listedAgainst =
    origin !== null && isPlatformOrigin(origin, c.req.raw, config(c.env).publicUrl) ? null : origin;
  const row = await c.env.DB.prepare(
    `SELECT
       EXISTS (SELECT 1 FROM end_users e JOIN apps a ON a.id = e.app_id AND a.deleted_at IS NULL
               WHERE e.id = ?1 AND e.app_id = ?2 AND e.org_id = ?3
                 AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.subject_id IN (?1, ?3))) AS live,
       (?4 IS NULL OR EXISTS (SELECT 1 FROM app_origins WHERE app_id = ?2 AND origin = ?4)) AS listed,
       (SELECT show_cost FROM apps WHERE id = ?2) AS show_cost`,
  )
    .bind(verified.endUserId, verified.appId, verified.orgId, listedAgainst)
    .first<{ live: number; listed: number; show_cost: number | null }>();
  if (row?.listed !== 1) {
    throw new AppError("forbidden", "This page's origin is not allowed to use this app");
  }
  if (origin !== null) {
    c.header("access-control-allow-origin", origin);
    c.header("vary", "Origin");
  }
  if (row.live !== 1) throw refused();
  c.set("endUser", {
    endUserId: verified.endUserId,
    appId: verified.appId,
    orgId: verified.orgId,
    tokenExpiresAt: verified.expiresAt,
    showCost: row.show_cost === 1,
  });
  c.header("cache-control", "no-store");
  await next();
});

/** The end user's session, or 404 (another's, a member's, another app's, a deleted one). */
async function ownSession(c: { env: Env }, who: EndUserPrincipal, sessionId: string) {
  return endUserSessionAccess(c.env.DB, who, sessionId);
}

export const endUserSessions = new Hono<EndUserEnv>()

  .get(
    "/me",
    describeRoute({
      tags: ["Embed"],
      summary: "The end user and their app",
      security: security.endUser,
      responses: { 200: json(embedMeSchema), ...errors(401) },
    }),
    requireEndUser,
    async (c) => {
      const who = c.get("endUser");
      const db = c.env.DB;
      const [endUser, app, projects] = await db.batch([
        db.prepare("SELECT id, external_id, name FROM end_users WHERE id = ?").bind(who.endUserId),
        db.prepare("SELECT id, name, show_cost FROM apps WHERE id = ?").bind(who.appId),
        db
          .prepare(
            `SELECT p.id, p.name FROM app_projects ap
           JOIN projects p ON p.id = ap.project_id AND p.deleted_at IS NULL
           WHERE ap.app_id = ? ORDER BY p.id`,
          )
          .bind(who.appId),
      ]);
      const user = endUser?.results[0] as
        | { id: string; external_id: string; name: string | null }
        | undefined;
      const appRow = app?.results[0] as { id: string; name: string; show_cost: number } | undefined;
      if (!user || !appRow) throw refused();
      return c.json({
        endUser: { id: user.id, externalId: user.external_id, name: user.name },
        app: {
          id: appRow.id,
          name: appRow.name,
          showCost: appRow.show_cost === 1,
          projects: (projects?.results ?? []) as { id: string; name: string }[],
        },
      } satisfies EmbedMe);
    },
  )

  /**
   * How a new chat in one of the app's projects opens: the welcome and suggested prompts of the
   * profile the end user's chats there run (the app's, else the project's default; the resolver's
   * own choice), and nothing else of the profile. A project the app does not list, another org's
   * included, is 404 like a missing one.
   */
  .get(
    "/projects/:projectId/opening",
    describeRoute({
      tags: ["Embed"],
      summary: "How a new chat opens: the welcome and suggested prompts",
      security: security.endUser,
      responses: { 200: json(chatOpeningSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    async (c) => {
      const who = c.get("endUser");
      const projectId = c.req.param("projectId");
      const listed = await c.env.DB.prepare(
        `SELECT 1 AS listed FROM app_projects ap
         JOIN projects p ON p.id = ap.project_id AND p.deleted_at IS NULL AND p.org_id = ?3
         WHERE ap.app_id = ?1 AND ap.project_id = ?2`,
      )
        .bind(who.appId, projectId, who.orgId)
        .first<{ listed: number }>();
      const opening = listed
        ? await resolveOpening(c.env, {
            orgId: who.orgId,
            projectId,
            callerKind: "end_user",
            appId: who.appId,
          })
        : null;
      if (!opening) throw notFound("Project");
      return c.json(opening satisfies ChatOpening);
    },
  )

  /** The end user's own sessions of this app, newest first. */
  .get(
    "/sessions",
    describeRoute({
      tags: ["Embed"],
      summary: "The end user's own sessions",
      security: security.endUser,
      responses: { 200: json(sessionPageSchema), ...errors(401) },
    }),
    requireEndUser,
    query(pageQuerySchema),
    async (c) => {
      const who = c.get("endUser");
      const rows = await idPage<SessionRowOut>(
        c.env.DB,
        {
          select: SESSION_LIST_SELECT,
          where: "s.app_id = ? AND s.owner_id = ? AND s.deleted_at IS NULL",
          binds: [who.appId, who.endUserId],
          id: "s.id",
        },
        c.req.valid("query"),
      );
      const page = await sessionListPage(c.env, who.orgId, rows);
      return c.json({
        ...page,
        items: page.items.map((item) => shownSession(item, who.showCost)),
      });
    },
  )

  /** Opens a session in one of the app's live projects (its first when none is named). */
  .post(
    "/sessions",
    describeRoute({
      tags: ["Embed"],
      summary: "Start a session",
      security: security.endUser,
      responses: { 201: json(sessionSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    jsonBody(createEndUserSessionSchema),
    async (c) => {
      const who = c.get("endUser");
      const { projectId, title } = c.req.valid("json");
      const project = await c.env.DB.prepare(
        `SELECT p.id FROM app_projects ap
       JOIN projects p ON p.id = ap.project_id AND p.deleted_at IS NULL AND p.org_id = ?2
       WHERE ap.app_id = ?1 AND (?3 IS NULL OR p.id = ?3) ORDER BY p.id LIMIT 1`,
      )
        .bind(who.appId, who.orgId, projectId ?? null)
        .first<{ id: string }>();
      if (!project) {
        throw new AppError(
          "invalid_request",
          projectId === undefined
            ? "This app has no project to open a session in"
            : "projectId: not a project of this app",
          { field: "projectId" },
        );
      }
      const now = Date.now();
      const row: SessionRowOut = {
        id: newId("session", now),
        project_id: project.id,
        org_id: who.orgId,
        owner_id: who.endUserId,
        title: title ?? null,
        created_at: now,
        updated_at: now,
      };
      // Written only while the app and the end user live: a deletion racing the request wins.
      const written = await c.env.DB.prepare(
        `INSERT INTO sessions (id, project_id, org_id, owner_id, app_id, title, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7
       WHERE EXISTS (SELECT 1 FROM apps WHERE id = ?5 AND deleted_at IS NULL)
         AND EXISTS (SELECT 1 FROM end_users WHERE id = ?4 AND app_id = ?5)`,
      )
        .bind(row.id, row.project_id, row.org_id, row.owner_id, who.appId, row.title, now)
        .run();
      if (written.meta.changes !== 1) throw refused();
      const [created] = await sessionPage(c.env, who.orgId, [row]);
      if (!created) throw refused();
      return c.json(shownSession(created, who.showCost), 201);
    },
  )

  .get(
    "/sessions/:sessionId",
    describeRoute({
      tags: ["Embed"],
      summary: "One of their sessions",
      security: security.endUser,
      responses: { 200: json(sessionSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    async (c) => {
      const who = c.get("endUser");
      const { session } = await ownSession(c, who, c.req.param("sessionId"));
      const [item] = await sessionPage(c.env, who.orgId, [session]);
      if (!item) throw notFound("Session");
      return c.json(shownSession(item, who.showCost));
    },
  )

  /** The limits on the end user's calls in this session (the embed's warning). */
  .get(
    "/sessions/:sessionId/limits",
    describeRoute({
      tags: ["Embed"],
      summary: "The limits on their calls in one of their sessions",
      security: security.endUser,
      responses: { 200: json(limitStatusSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    async (c) => {
      const who = c.get("endUser");
      const { session, limits } = await ownSession(c, who, c.req.param("sessionId"));
      return c.json(
        await limitStatus(c.env, who.orgId, {
          memberId: who.endUserId,
          projectId: session.project_id,
          endUserLimits: limits,
        }),
      );
    },
  )

  .patch(
    "/sessions/:sessionId",
    describeRoute({
      tags: ["Embed"],
      summary: "Rename one of their sessions",
      security: security.endUser,
      responses: { 200: json(sessionSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    // Their own rename: a title only. An end user never picks a model (their app's profile
    // does): `model` is an unknown field here, refused (400) like any other.
    jsonBody(updateEndUserSessionSchema),
    async (c) => {
      const who = c.get("endUser");
      const { session } = await ownSession(c, who, c.req.param("sessionId"));
      const { title } = c.req.valid("json");
      await c.env.DB.prepare("UPDATE sessions SET title = ? WHERE id = ? AND deleted_at IS NULL")
        .bind(title, session.id)
        .run();
      const [item] = await sessionPage(c.env, who.orgId, [{ ...session, title }]);
      if (!item) throw notFound("Session");
      return c.json(shownSession(item, who.showCost));
    },
  )

  /**
   * A single-use ticket to open the socket of one of the end user's sessions (a browser cannot
   * set a header on an upgrade). The ticket names the end user (`user_id`) and their app
   * (`family_id`); the upgrade checks the session, the app and the page's origin again.
   */
  .post(
    "/connect-tickets",
    describeRoute({
      tags: ["Embed"],
      summary: "A connect ticket for one of their sessions",
      security: security.endUser,
      responses: { 201: json(issuedConnectTicketSchema), ...errors(401, 404) },
    }),
    requireEndUser,
    jsonBody(endUserConnectTicketSchema),
    async (c) => {
      const who = c.get("endUser");
      const { sessionId } = c.req.valid("json");
      await ownSession(c, who, sessionId);
      const issued = await issueConnectTicket(
        c.env.DB,
        { userId: who.endUserId, familyId: who.appId, version: 0, expiresAt: who.tokenExpiresAt },
        { agent: "assistant-agent", name: sessionId },
      );
      return c.json(
        { ticket: issued.ticket, expiresAt: iso(issued.expiresAt) } satisfies ConnectTicket,
        201,
      );
    },
  );
