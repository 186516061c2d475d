import {
  type ApiKeyScope,
  endUserTokenRequestSchema,
  endUserTokenSchema,
  erasureRecordSchema,
} from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { appAccess, notFound } from "../auth/access.ts";
import { acceptApiKey, apiKeyPrincipal, requireApiKey } from "../auth/api-keys.ts";
import { mintEndUserToken } from "../auth/end-users.ts";
import { type AppRecord, lookupApp } from "../db/apps.ts";
import { fileErasure, toErasureRequest } from "../erasure/file.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";

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

export const appEndUsers = new Hono<AppEnv>()

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
   * Erases one end user of the app, named by the tenant's own id for them: their sessions and
   * transcripts, their row, their identity in the ledger (pseudonymized, amounts kept), across
   * every store, as a member's erasure does (the request is of type `member`: an end user is a
   * principal of the org). 202 with the erasure request; an end user the app never saw is 404.
   */
  .delete(
    "/:appId/end-users/:externalId",
    describeRoute({
      tags: ["Apps"],
      summary: "Erase an end user",
      security: security.memberOrApiKey("end_users:erase"),
      responses: { 202: json(erasureRecordSchema), ...errors(401, 403, 404) },
    }),
    acceptApiKey("end_users:erase"),
    async (c) => {
      const app = await appFor(c, c.req.param("appId"), "end_users:erase");
      const db = c.env.DB;
      const endUser = await db
        .prepare("SELECT id FROM end_users WHERE app_id = ? AND external_id = ?")
        .bind(app.id, c.req.param("externalId"))
        .first<{ id: string }>();
      if (!endUser) throw notFound("End user");
      const { results } = await db
        .prepare("SELECT id FROM sessions WHERE org_id = ? AND owner_id = ? AND app_id = ?")
        .bind(app.org_id, endUser.id, app.id)
        .all<{ id: string }>();
      const key = c.get("apiKey");
      const requestedBy = key ? key.keyId : c.get("caller").userId;
      const request = await fileErasure(c.env, {
        requestedBy,
        orgId: app.org_id,
        subject: { type: "member", id: endUser.id },
        reason: null,
        plan: {
          userId: endUser.id,
          orgIds: [app.org_id],
          projectIds: [],
          sessionIds: results.map((row) => row.id),
          deleteOrgIds: [],
          membershipOrgId: app.org_id,
          chatProjectIds: [],
          email: null,
        },
      });
      return c.json(toErasureRequest(request), 202);
    },
  );
