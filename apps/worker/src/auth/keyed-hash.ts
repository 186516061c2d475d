import { hmacSha256, toBase64Url } from "./encoding.ts";

/**
 * Keyed hashes for places that must recognize a person without holding who they are: the keys of
 * rate limiters (Cloudflare's counters should never see a user id or an email) and the record that
 * a person already had their sign-up grant. Each use has its own label, so one hash says nothing
 * about another. The key is `ERASURE_HASH_KEY`, the platform's pseudonym key.
 */
export async function keyedHash(secret: string, label: string, value: string): Promise<string> {
  return toBase64Url(await hmacSha256(secret, `parley-${label}:${value}`)).slice(0, 32);
}

/**
 * One person's email however they spell it: lower case, without a `+tag`, and for Gmail without
 * dots (Gmail delivers all of those to the same inbox), so `A.da+2@gmail.com` is `ada@gmail.com`.
 */
export function normalizedEmail(email: string): string {
  const [local = "", domain = ""] = email
    .trim()
    .toLowerCase()
    .split(/@(?=[^@]*$)/);
  const gmail = domain === "gmail.com" || domain === "googlemail.com";
  const base = local.split("+")[0] ?? "";
  return `${gmail ? base.replaceAll(".", "") : base}@${gmail ? "gmail.com" : domain}`;
}
