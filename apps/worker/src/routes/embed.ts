import { AppError, embedTokenSchema, endUserTokenSchema } from "@parley/shared";
import { type Context, Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { mintEndUserToken } from "../auth/end-users.ts";
import { keyedHash } from "../auth/keyed-hash.ts";
import { refusedToken, verifyTenantToken } from "../auth/tenant-tokens.ts";
import { anyAppListsOrigin, lookupApp, preflightResponse } from "../db/apps.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json, security } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";
import { clientAddress } from "./auth.ts";

/**
 * The end-user token exchange (public: no Parley sign-in; docs/2026-12-02-apps-and-end-users.md).
 * A tenant's page (or backend) sends the token its backend signed for one of its users; an app
 * that verifies it gets an end-user access token back.
 *
 * Browsers: a request with an `Origin` must come from one of the app's origins, else 403 with no
 * CORS headers (the page cannot read anything); from a listed origin the answer, refusals included,
 * carries CORS headers for exactly that origin. No credentials (cookies) are involved, so
 * `Access-Control-Allow-Credentials` is never sent. A preflight carries no app id: it is answered
 * for an origin some live app lists, and the POST then checks this app's list. A request without
 * `Origin` is not a browser's (the tenant's backend) and needs none.
 */

function allowOrigin(c: Context<AppEnv>, origin: string): void {
  c.header("access-control-allow-origin", origin);
  c.header("vary", "Origin");
}

const forbiddenOrigin = () =>
  new AppError("forbidden", "This page's origin is not allowed to use this app");

export const embed = new Hono<AppEnv>()

  // Every end-user route's preflight (the token exchange, and those of end-user-sessions.ts).
  .options("/*", async (c) => {
    const origin = c.req.header("origin");
    if (origin === undefined || !(await anyAppListsOrigin(c.env.DB, origin))) {
      throw forbiddenOrigin();
    }
    return preflightResponse(origin);
  })

  /**
   * Refusals of the token are all 401 with one message, and write nothing: a bad signature, another
   * app's secret, a rotated-out secret after its overlap, an expired or too long-lived token, the
   * wrong `iss` or `aud`, another `alg` or `none`, a deleted app, a malformed token. A token that
   * verifies but whose `sub` is not an external id (packages/shared external-ids.ts) is 400
   * `invalid_request` naming `sub`, as the API-key mint and the erasure refuse that id: only the
   * tenant, who signed it, learns that its signature was good.
   */
  .post(
    "/token",
    describeRoute({
      tags: ["Embed"],
      summary: "Exchange a tenant-signed token for an end-user token",
      security: security.public,
      responses: { 200: json(endUserTokenSchema), ...errors(400, 401, 403, 429) },
    }),
    jsonBody(embedTokenSchema),
    async (c) => {
      const { appId, token } = c.req.valid("json");
      const origin = c.req.header("origin");
      const app = await lookupApp(c.env.DB, appId);
      if (origin !== undefined && app !== null) {
        if (!app.origins.includes(origin)) throw forbiddenOrigin();
        allowOrigin(c, origin);
      }
      if (!app) throw refusedToken();
      // Per client first (one visitor replaying tokens), before any key is fetched or signature
      // checked; keyed hashes, so the limiter holds no address.
      const client = await keyedHash(
        c.env.ERASURE_HASH_KEY,
        "embed-token-client-rate",
        `${app.id}\n${clientAddress(c.req.header("cf-connecting-ip"))}`,
      );
      const limited = () =>
        new AppError("rate_limited", "Too many end-user token exchanges; try again in a minute");
      const perClient = await c.env.EMBED_TOKEN_CLIENT_RATE_LIMITER.limit({ key: client });
      if (!perClient.success) throw limited();
      const claims = await verifyTenantToken(c.env, app, token);
      // The app's whole budget counts exchanges that verified only: refused tokens from anywhere
      // cannot use it up and lock the app's real users out (found by the outside probe). What
      // refusals cost is bounded per client above, and a failing JWKS URL is not refetched for 30 s.
      const perApp = await c.env.EMBED_TOKEN_RATE_LIMITER.limit({
        key: await keyedHash(c.env.ERASURE_HASH_KEY, "embed-token-rate", app.id),
      });
      if (!perApp.success) throw limited();
      // A bearer token: no cache between the page and us may keep it.
      c.header("cache-control", "no-store");
      return c.json(
        await mintEndUserToken(c.env, app, {
          sub: claims.sub,
          name: claims.name,
          notAfter: claims.expiresAt,
        }),
      );
    },
  );
