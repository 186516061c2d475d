import { hmacSha256 } from "../auth/encoding.ts";

/**
 * Signs an alert webhook the way Stripe signs its own: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`, so receivers can reuse a familiar verification and refuse stale timestamps.
 */
export async function signAlert(secret: string, body: string, now = Date.now()): Promise<string> {
  const t = Math.floor(now / 1000);
  const mac = await hmacSha256(secret, `${t}.${body}`);
  const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `t=${t},v1=${hex}`;
}
