import { hmacSha256, toBase64Url } from "../auth/encoding.ts";

/**
 * A keyed hash standing in for an erased identifier: stable (the same member gets the same
 * pseudonym in every store, so the ledger's totals per member still add up), and not reversible
 * without `ERASURE_HASH_KEY`.
 */
export async function pseudonym(secret: string, id: string): Promise<string> {
  return `anon_${toBase64Url(await hmacSha256(secret, `parley-erasure:${id}`)).slice(0, 22)}`;
}
