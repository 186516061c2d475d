import { checkWebhookUrl } from "../billing/webhook-url.ts";

/**
 * Where a tool source may point, and so where Parley sends a call: the alert webhook's rule
 * (billing/webhook-url.ts: https to a public host; http and private addresses only for the hosts
 * `TOOL_SOURCES_ALLOW_PRIVATE` lists, `host[:port]` entries or `*`), and two more of its own:
 *
 * - a public source is on the standard https port (443). Another port on a public address is most
 *   often a service that was never meant to face the internet (an admin console, a database's
 *   HTTP port); a listed private host keeps the port its entry names.
 * - no fragment (it never reaches a server, so it could only confuse what the audience is).
 *
 * Checked when a source is registered or changed, and again before every request of every call
 * (the rule or the var may have changed since). A host name resolving to a private address is not
 * caught here (no DNS in a pure check): Workers' `fetch` does not reach private networks in
 * production, and redirects are never followed (guarded-fetch.ts).
 */
export type SourceUrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

export function checkSourceUrl(url: string, allowPrivate: string): SourceUrlCheck {
  const base = checkWebhookUrl(url, allowPrivate);
  if (!base.ok) return base;
  const parsed = new URL(url);
  if (parsed.hash !== "" || url.includes("#")) {
    return { ok: false, reason: "must not contain a fragment" };
  }
  // The webhook rule let it through: either a listed private host (its entry decided the port) or
  // a public https URL, which must use the standard port.
  if (!listedPrivate(url, allowPrivate) && parsed.port !== "" && parsed.port !== "443") {
    return { ok: false, reason: "must use the standard https port (443) on a public host" };
  }
  return { ok: true, url: parsed };
}

/**
 * Whether the URL passes only because the allow list names its host: the same check with an
 * empty list fails (http, a private address, a local name) while the listed one passes.
 */
function listedPrivate(url: string, allowPrivate: string): boolean {
  if (allowPrivate.trim() === "") return false;
  return !checkWebhookUrl(url, "").ok || allowPrivate.split(",").some((e) => e.trim() === "*");
}

/** The private-host allow list for tool sources (`TOOL_SOURCES_ALLOW_PRIVATE`; empty: none). */
export const sourceAllowList = (env: Env): string => env.TOOL_SOURCES_ALLOW_PRIVATE ?? "";
