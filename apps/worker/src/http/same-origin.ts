import { AppError } from "@parley/shared";
import { createMiddleware } from "hono/factory";
import { config } from "../env.ts";
import type { AppEnv } from "./context.ts";

/**
 * Whether a request may act on (or set) the refresh cookie, judged by what a browser says about who
 * made it. SameSite=Strict is the first line: a cross-site page's requests carry no cookie. This is
 * the second, for what SameSite does not cover (a page on a sibling subdomain is same-site, so its
 * requests do carry the cookie) and for browsers that ignore it:
 * - `Origin` present: it must be this request's own origin, or PUBLIC_URL's (the web app deployed on
 *   an origin of its own). `null` (sandboxed frames, cross-origin redirects) never matches.
 * - `Sec-Fetch-Site` present: it must be `same-origin` or `none` (typed by the user), unless `Origin`
 *   is the configured PUBLIC_URL, which is another origin by design.
 * - Neither header: not a browser (curl, the README walk-through, Node clients). Allowed: such a
 *   client holds the cookie itself, so there is no ambient credential to forge a request with.
 */
export function fromAllowedOrigin(request: Request, publicUrl: string | null): boolean {
  const own = new URL(request.url).origin;
  const configured = publicUrl ? new URL(publicUrl).origin : null;
  const origin = request.headers.get("origin");
  const site = request.headers.get("sec-fetch-site");
  const sameOriginSite = site === null || site === "same-origin" || site === "none";
  if (origin === null || origin === own) return sameOriginSite;
  return origin === configured;
}

/**
 * Whether `origin` is Parley's own pages' (this request's own origin, or PUBLIC_URL's): the web
 * app, where the developers' area previews an app as its end users see it (an end user minted by
 * `POST /api/apps/:appId/preview-token`). End-user calls from a browser must otherwise come from an
 * origin the app lists; Parley's own origin serves only Parley's code, so it is no tenant's page to
 * keep out, and a tenant cannot be asked to list it.
 */
export function isPlatformOrigin(origin: string, request: Request, publicUrl: string | null) {
  if (origin === new URL(request.url).origin) return true;
  return publicUrl !== null && origin === new URL(publicUrl).origin;
}

/** Refuses a cross-origin browser request with 403 `forbidden` before the handler runs. */
export const sameOriginOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!fromAllowedOrigin(c.req.raw, config(c.env).publicUrl)) {
    throw new AppError("forbidden", "Requests from another origin may not use the sign-in cookie");
  }
  await next();
});
