/**
 * Signs an alert webhook the way Stripe signs its own: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`, so receivers can reuse a familiar verification and refuse stale timestamps.
 */
export async function signAlert(secret: string, body: string, now = Date.now()): Promise<string> {
  const t = Math.floor(now / 1000);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${t}.${body}`));
  const hex = [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `t=${t},v1=${hex}`;
}
