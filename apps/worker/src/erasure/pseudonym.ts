import { toBase64Url } from "../auth/encoding.ts";

/**
 * A keyed hash standing in for an erased identifier: stable (the same member gets the same
 * pseudonym in every store, so the ledger's totals per member still add up), and not reversible
 * without `ERASURE_HASH_KEY`.
 */
export async function pseudonym(secret: string, id: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`parley-erasure:${id}`),
  );
  return `anon_${toBase64Url(new Uint8Array(mac)).slice(0, 22)}`;
}
