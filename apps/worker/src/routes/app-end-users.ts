import {
  type ApiKeyScope,
  END_USER_USAGE_DAYS,
  type EndUserWithUsage,
  endUserPageSchema,
  endUserTokenRequestSchema,
  endUserTokenSchema,
  eraseEndUserSchema,
  erasureRecordSchema,
  pageQuerySchema,
  previewExternalId,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { appAccess, notFound } from "../auth/access.ts";
import { acceptApiKey, apiKeyPrincipal, requireApiKey } from "../auth/api-keys.ts";
import { mintEndUserToken } from "../auth/end-users.ts";
import { billingAccount } from "../billing/account.ts";
import { usageGroups } from "../billing/billing-account.ts";
import { type AppRecord, lookupApp } from "../db/apps.ts";
import { idPage, iso } from "../db/pagination.ts";
import { config } from "../env.ts";
import { fileErasure, toErasureRequest } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { deprecatedForm } from "../http/deprecated.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody, noBody, query } from "../http/validate.ts";

/**
 * An app's end users, from the tenant's side (docs/2026-12-02-apps-and-end-users.md): a tenant's
 * server mints an end-user token with an API key (`end_users:token`), and the tenant, as the
 * controller of its users' data, erases one (an API key with `end_users:erase`, or an owner or
 * admin of the org). Another org's app is 404 to a key, like a missing one.
 */

/** The live app, for an API key of its org (with `scope`) or an owner or admin of it. */
async function appFor(c: Context<AppEnv>, appId: string, scope: ApiKeyScope): Promise<AppRecord> {
  if (c.get("apiKey")) {
    const app = await lookupApp(c.env.DB, appId);
    if (!app) throw notFound("App");
    apiKeyPrincipal(c, app.org_id, scope);
    return app;
  }
  return (await appAccess(c.env.DB, c.get("caller").userId, appId)).app;
}

const DAY_MS = 24 * 60 * 60 * 1000;

interface EndUserRow {
  id: string;
  app_id: string;
  external_id: string;
  name: string | null;
  created_at: number;
  last_seen_at: number;
}

export const appEndUsers = new Hono<AppEnv>()

  /**
   * The app's end users, newest first, each with their usage over the last 30 days (billing's
   * usage by member, where an end user is a principal like a member). Owners and admins, as for
   * the app itself; erased end users are gone from it (their row is deleted by the erasure).
   */
  .get(
    "/:appId/end-users",
    describeRoute({
      tags: ["Apps"],
      summary: "An app's end users with their usage",
      responses: { 200: json(endUserPageSchema), ...errors(400, 401, 403, 404, 410) },
    }),
    query(pageQuerySchema),
    async (c) => {
      const { app } = await appAccess(c.env.DB, c.get("caller").userId, c.req.param("appId"));
      const page = await idPage<EndUserRow>(
        c.env.DB,
        {
          select: "SELECT id, app_id, external_id, name, created_at, last_seen_at FROM end_users",
          where: "app_id = ? AND org_id = ?",
          binds: [app.id, app.org_id],
        },
        c.req.valid("query"),
      );
      const to = Date.now() + 1;
      const usage = new Map(
        page.items.length === 0
          ? []
          : usageGroups(
              await billingAccount(c.env, app.org_id).usage({
                from: to - END_USER_USAGE_DAYS * DAY_MS,
                to,
                groupBy: "member",
              }),
            ).map((group) => [group.key, group]),
      );
      return c.json({
        ...page,
        items: page.items.map((row): EndUserWithUsage => {
          const used = usage.get(row.id);
          return {
            id: row.id,
            appId: row.app_id,
            externalId: row.external_id,
            name: row.name,
            createdAt: iso(row.created_at),
            lastSeenAt: iso(row.last_seen_at),
            usage: { requests: used?.requests ?? 0, priceMicros: used?.priceMicros ?? 0 },
          };
        }),
      });
    },
  )

  /**
   * An end-user access token for the developers' area's live preview: the calling owner or admin
   * chats as their own preview end user of the app (`previewExternalId`), exactly as the app's end
   * users do (its projects, profile, limits and cost display), from Parley's own pages. Their
   * usage is the org's like any end user's, and the preview end user is listed and erasable.
   */
  .post(
    "/:appId/preview-token",
    describeRoute({
      tags: ["Apps"],
      summary: "An end-user token for the app's preview",
      responses: { 201: json(endUserTokenSchema), ...errors(400, 401, 403, 404, 410) },
    }),
    noBody,
    async (c) => {
      const { userId } = c.get("caller");
      const { app } = await appAccess(c.env.DB, userId, c.req.param("appId"));
      const user = await c.env.DB.prepare("SELECT name FROM users WHERE id = ?")
        .bind(userId)
        .first<{ name: string }>();
      c.header("cache-control", "no-store");
      return c.json(
        await mintEndUserToken(c.env, app, {
          sub: previewExternalId(userId),
          parley: true,
          name: `${user?.name ?? "Member"} (preview)`,
        }),
        201,
      );
    },
  )

  /**
   * An end-user access token for the tenant's user `sub`, minted by the tenant's server with an
   * API key instead of a signed tenant token: the same answer as `POST /api/embed/token`.
   */
  .post(
    "/:appId/end-user-tokens",
    describeRoute({
      tags: ["Apps"],
      summary: "Mint an end-user token from a server",
      security: security.apiKey("end_users:token"),
      responses: { 201: json(endUserTokenSchema), ...errors(401, 403, 404) },
    }),
    requireApiKey("end_users:token"),
    jsonBody(endUserTokenRequestSchema),
    async (c) => {
      const app = await appFor(c, c.req.param("appId"), "end_users:token");
      const { sub, name } = c.req.valid("json");
      c.header("cache-control", "no-store");
      return c.json(await mintEndUserToken(c.env, app, { sub, name: name ?? null }), 201);
    },
  )

  /**
   * Erases one end user of the app, named in the body by the tenant's id for them
   * (`{ "externalId": ... }`, the external-id rule: packages/shared external-ids.ts) or by the
   * Parley id the exchange returned (`{ "endUserId": "eu_..." }`): their sessions and transcripts,
   * their row, their identity in the ledger (pseudonymized, amounts kept), across every store, as
   * a member's erasure does. 202 with the erasure request; an end user the app never saw is 404.
   * The id travels in the body: a path is kept by request logs and traces, and a tenant's id is
   * often an email (found by the outside probe, 2026-12-05).
   */
  .post(
    "/:appId/end-users/erase",
    describeRoute({
      tags: ["Apps"],
      summary: "Erase an end user",
      security: security.memberOrApiKey("end_users:erase"),
      responses: { 202: json(erasureRecordSchema), ...errors(400, 401, 403, 404) },
    }),
    acceptApiKey("end_users:erase"),
    jsonBody(eraseEndUserSchema),
    async (c) => {
      const app = await appFor(c, c.req.param("appId"), "end_users:erase");
      const who = c.req.valid("json");
      const endUser = await c.env.DB.prepare(
        "externalId" in who
          ? "SELECT id FROM end_users WHERE app_id = ? AND external_id = ?"
          : "SELECT id FROM end_users WHERE app_id = ? AND id = ?",
      )
        .bind(app.id, "externalId" in who ? who.externalId : who.endUserId)
        .first<{ id: string }>();
      if (!endUser) throw notFound("End user");
      return c.json(toErasureRequest(await eraseEndUser(c, app, endUser.id)), 202);
    },
  )

  /**
   * The first form, with the tenant's id in the path (deprecated 2026-12-06): it answers until
   * `END_USER_ERASE_PATH_END` (default 2027-01-05, UTC), then 410. Ids that are path segments of
   * their own (`.`, `..`) or hold a `/` never reached it: the body form names every end user.
   */
  .delete(
    "/:appId/end-users/:externalId",
    describeRoute({
      tags: ["Apps"],
      summary: "Erase an end user (deprecated form)",
      description:
        "Deprecated: the tenant's id in the path is kept by request logs. Use POST .../end-users/erase " +
        "with `{ externalId }`. Answers until END_USER_ERASE_PATH_END (default 2027-01-05, UTC), then 410 `gone`.",
      deprecated: true,
      security: security.memberOrApiKey("end_users:erase"),
      responses: { 202: json(erasureRecordSchema), ...errors(401, 403, 404, 410) },
    }),
    acceptApiKey("end_users:erase"),
    async (c) => {
      deprecatedForm(c, {
        deprecatedAt: "2026-12-06",
        endsAt: config(c.env).pathFormsEnd.endUserErase,
        successor: `/api/apps/${c.req.param("appId")}/end-users/erase`,
      });
      const app = await appFor(c, c.req.param("appId"), "end_users:erase");
      const endUser = await c.env.DB.prepare(
        "SELECT id FROM end_users WHERE app_id = ? AND external_id = ?",
      )
        .bind(app.id, c.req.param("externalId"))
        .first<{ id: string }>();
      if (!endUser) throw notFound("End user");
      return c.json(toErasureRequest(await eraseEndUser(c, app, endUser.id)), 202);
    },
  );

/** Files the erasure of one end user of the app (a member-type request of the app's org). */
async function eraseEndUser(c: Context<AppEnv>, app: AppRecord, endUserId: string) {
  const { results } = await c.env.DB.prepare(
    "SELECT id FROM sessions WHERE org_id = ? AND owner_id = ? AND app_id = ?",
  )
    .bind(app.org_id, endUserId, app.id)
    .all<{ id: string }>();
  const key = c.get("apiKey");
  return fileErasure(c.env, {
    requestedBy: key ? key.keyId : c.get("caller").userId,
    orgId: app.org_id,
    subject: { type: "member", id: endUserId },
    reason: null,
    plan: {
      userId: endUserId,
      orgIds: [app.org_id],
      projectIds: [],
      sessionIds: results.map((row) => row.id),
      deleteOrgIds: [],
      membershipOrgId: app.org_id,
      chatProjectIds: [],
      email: null,
    },
  });
}
