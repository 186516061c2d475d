import { z } from "zod";

/**
 * The rule an outside endpoint's URL follows (an app's JWKS, an alert webhook, a tool source): https
 * to a public host, http only to a private host a development setting lists. The Worker checks the
 * host, which needs its settings; the schema refuses every other scheme with this rule in words
 * (zod said only "Invalid URL" for `ftp://...`).
 */
export const ENDPOINT_URL_RULE =
  "must be an https:// URL (http:// only for a host the platform's development settings list)";

/** An http(s) URL of at most `max` characters; anything else is refused with `rule`. */
export const webUrlSchema = (max: number, rule: string = ENDPOINT_URL_RULE) =>
  z.url({ protocol: /^https?$/, error: rule }).max(max, `must be at most ${max} characters`);
